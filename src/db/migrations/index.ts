// The ordered list of migrations. A static list (not a folder scan) so that the same code runs
// from src/ (type-stripped .ts) and from the compiled dist/.
import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation.ts';
import * as m0002 from './0002_events.ts';
import * as m0003 from './0003_accounts.ts';
import * as m0004 from './0004_traffic.ts';
import * as m0005 from './0005_webhooks.ts';
import * as m0006 from './0006_mail.ts';
import * as m0007 from './0007_teams.ts';
import * as m0008 from './0008_oauth.ts';
import * as m0009 from './0009_delivery_log_indexes.ts';
import * as m0010 from './0010_delivery_queue_fillfactor.ts';
import * as m0011 from './0011_audit_entries.ts';
import * as m0012 from './0012_scale_indexes.ts';
import * as m0013 from './0013_standard_webhooks.ts';
import * as m0014 from './0014_mail_outbox_purge_index.ts';
import * as m0015 from './0015_mail_events_purge_index.ts';
import * as m0016 from './0016_membership_team_copy.ts';
import * as m0017 from './0017_credential_changes.ts';

/**
 * Every migration, in the order they apply: a database of an earlier release has applied a prefix of
 * this list, and starting this code applies the rest.
 */
export const MIGRATIONS: readonly (readonly [name: string, migration: Migration])[] = [
  ['0001_foundation', m0001],
  ['0002_events', m0002],
  ['0003_accounts', m0003],
  ['0004_traffic', m0004],
  ['0005_webhooks', m0005],
  ['0006_mail', m0006],
  ['0007_teams', m0007],
  ['0008_oauth', m0008],
  ['0009_delivery_log_indexes', m0009],
  ['0010_delivery_queue_fillfactor', m0010],
  ['0011_audit_entries', m0011],
  ['0012_scale_indexes', m0012],
  ['0013_standard_webhooks', m0013],
  ['0014_mail_outbox_purge_index', m0014],
  ['0015_mail_events_purge_index', m0015],
  ['0016_membership_team_copy', m0016],
  ['0017_credential_changes', m0017],
];

// Kysely's migrator applies migrations in the order of their names, whatever order it is given them
// in; a name out of this list's order would be applied out of it. Checked when the list loads, so the
// list is the one order there is.
for (let i = 1; i < MIGRATIONS.length; i++) {
  if (!(MIGRATIONS[i - 1][0] < MIGRATIONS[i][0]))
    throw new Error(`migration ${MIGRATIONS[i][0]} must sort after ${MIGRATIONS[i - 1][0]}`);
}
