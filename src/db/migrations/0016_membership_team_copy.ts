import type { Kysely } from 'kysely';
import { flag, isPostgres, sql } from './helpers.ts';

// memberships (team_name, team_active): the team's name and state copied onto each of its membership
// rows, and memberships_user_teams_idx (user_id, team_active, team_name, team_id, role) over them.
//
// Why: a user's team list is ordered by team name and counts only active teams. With name and state
// only on the team, every request read every one of the user's teams by key to count and sort them
// (400 probes of the teams' key for a user in 200 teams, for a page of 50), and a probe costs more the
// deeper the key index is: at a million teams the list cost 1.33× (SQLite) and 1.40× (PostgreSQL) its
// figure at a thousand. Now the count and the page's order come from one range of this index, and only
// the page's teams are read (for their slug).
//
// The copy is kept by the database, not by the code that writes, so no write path (the API, the CLI, a
// restore, a test's or the bench's direct insert) can leave it stale: a new membership takes its team's
// values; a change of a team's name or state is written to all its memberships in the same statement
// (a rename of a team of 10,000 members rewrites 10,000 rows; renames are rare, reads are every request).
// PostgreSQL: the insert's trigger reads the team `for share`, so it waits for a rename in progress and
// reads the renamed row (a rename does not wait for the foreign key's lock, which covers only keys), and
// a rename waits for the insert, whose row its trigger's update then sees.
const USER_TEAMS_INDEX = ['user_id', 'team_active', 'team_name', 'team_id', 'role'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('memberships')
    .addColumn('team_name', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema.alterTable('memberships').addColumn('team_active', 'integer', flag(1)).execute();
  await sql`update memberships set team_name = (select t.name from teams t where t.id = memberships.team_id),
    team_active = (select t.is_active from teams t where t.id = memberships.team_id)`.execute(db);
  for (const statement of isPostgres(db) ? POSTGRES_TRIGGERS : SQLITE_TRIGGERS) await sql.raw(statement).execute(db);
  await db.schema.createIndex('memberships_user_teams_idx').on('memberships').columns(USER_TEAMS_INDEX).execute();
  // The new index leads with user_id: it serves every look-up the old one did.
  await db.schema.dropIndex('memberships_user_idx').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('memberships_user_idx').on('memberships').column('user_id').execute();
  await db.schema.dropIndex('memberships_user_teams_idx').execute();
  const statements = isPostgres(db)
    ? [
        'drop trigger memberships_copy_team on memberships',
        'drop trigger teams_copy_to_memberships on teams',
        'drop function memberships_copy_team()',
        'drop function teams_copy_to_memberships()',
      ]
    : [
        'drop trigger memberships_copy_team_insert',
        'drop trigger memberships_copy_team_move',
        'drop trigger teams_copy_to_memberships',
      ];
  for (const statement of statements) await sql.raw(statement).execute(db);
  await db.schema.alterTable('memberships').dropColumn('team_active').execute();
  await db.schema.alterTable('memberships').dropColumn('team_name').execute();
}

const POSTGRES_TRIGGERS = [
  `create function memberships_copy_team() returns trigger language plpgsql as $$
   begin
     select t.name, t.is_active into new.team_name, new.team_active from teams t where t.id = new.team_id for share;
     return new;
   end $$`,
  `create trigger memberships_copy_team before insert or update of team_id on memberships
   for each row execute function memberships_copy_team()`,
  `create function teams_copy_to_memberships() returns trigger language plpgsql as $$
   begin
     update memberships set team_name = new.name, team_active = new.is_active where team_id = new.id;
     return null;
   end $$`,
  `create trigger teams_copy_to_memberships after update of name, is_active on teams for each row
   when (old.name is distinct from new.name or old.is_active is distinct from new.is_active)
   execute function teams_copy_to_memberships()`,
];

// SQLite cannot change the row a BEFORE trigger is given, so the new row is updated after its insert
// (one write serializes them: no rename can come between).
const SQLITE_COPY = `update memberships set (team_name, team_active) =
     (select t.name, t.is_active from teams t where t.id = new.team_id) where id = new.id`;
const SQLITE_TRIGGERS = [
  `create trigger memberships_copy_team_insert after insert on memberships begin ${SQLITE_COPY}; end`,
  `create trigger memberships_copy_team_move after update of team_id on memberships begin ${SQLITE_COPY}; end`,
  `create trigger teams_copy_to_memberships after update of name, is_active on teams
   when old.name is not new.name or old.is_active is not new.is_active
   begin update memberships set team_name = new.name, team_active = new.is_active where team_id = new.id; end`,
];
