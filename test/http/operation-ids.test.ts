// Every operation of the OpenAPI document has a stable, readable, unique snake_case operationId: the
// typed client's users and the tools generated from the document (one per operation) are named
// after them, so renaming one is a breaking change, caught here by the full list.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startApp, type TestApp } from '../support/app.ts';

const EXPECTED: Record<string, string> = {
  'GET /api/v1/me/': 'get_me',
  'PATCH /api/v1/me/': 'update_me',
  'GET /api/v1/teams/': 'list_teams',
  'POST /api/v1/teams/': 'create_team',
  'GET /api/v1/teams/{id}/': 'get_team',
  'PATCH /api/v1/teams/{id}/': 'update_team',
  'GET /api/v1/teams/{id}/members/': 'list_members',
  'GET /api/v1/teams/{team_id}/audit-log/': 'list_audit_entries',
  'PATCH /api/v1/teams/{id}/members/{user_id}/': 'set_member_role',
  'DELETE /api/v1/teams/{id}/members/{user_id}/': 'remove_member',
  'POST /api/v1/teams/{team_id}/invitations/': 'create_invitation',
  'GET /api/v1/teams/{team_id}/invitations/': 'list_invitations',
  'DELETE /api/v1/teams/{team_id}/invitations/{id}/': 'revoke_invitation',
  'POST /api/v1/invitations/accept/': 'accept_invitation',
  'GET /api/v1/products/': 'list_products',
  'GET /api/v1/event-types/': 'list_event_types',
  'POST /api/v1/teams/{team_id}/webhooks/': 'create_webhook',
  'GET /api/v1/teams/{team_id}/webhooks/': 'list_webhooks',
  'GET /api/v1/teams/{team_id}/webhooks/{id}/': 'get_webhook',
  'PATCH /api/v1/teams/{team_id}/webhooks/{id}/': 'update_webhook',
  'DELETE /api/v1/teams/{team_id}/webhooks/{id}/': 'delete_webhook',
  'POST /api/v1/teams/{team_id}/webhooks/{id}/rotate-secret/': 'rotate_webhook_secret',
  'GET /api/v1/teams/{team_id}/webhooks/{id}/logs/': 'list_webhook_deliveries',
  'POST /api/v1/teams/{team_id}/webhooks/{id}/logs/{log_id}/retry/': 'retry_webhook_delivery',
  'POST /api/v1/teams/{team_id}/webhooks/{id}/test/': 'test_webhook',
  'POST /api/auth/token/': 'issue_jwt',
  'POST /api/auth/token/refresh/': 'refresh_jwt',
  'POST /api/auth/token/revoke/': 'revoke_jwt',
  'GET /api/v1/admin/suppressions/': 'list_suppressions',
  'DELETE /api/v1/admin/suppressions/{email}/': 'release_suppression',
};

describe('OpenAPI operationIds', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t?.close());

  it('every operation has a unique snake_case operationId, and they are the documented ones', async () => {
    const res = await t.inject({ url: '/api/schema/' });
    assert.equal(res.statusCode, 200);
    const found: Record<string, string> = {};
    const seen = new Map<string, string>();
    const problems: string[] = [];
    for (const [path, operations] of Object.entries<Record<string, { operationId?: string }>>(res.json().paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const where = `${method.toUpperCase()} ${path}`;
        const id = operation.operationId;
        if (!id) problems.push(`${where}: no operationId`);
        else if (!/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(id))
          problems.push(`${where}: "${id}" is not snake_case (verb_noun)`);
        else if (seen.has(id)) problems.push(`${where}: "${id}" is also the id of ${seen.get(id)}`);
        else seen.set(id, where);
        if (id) found[where] = id;
      }
    }
    assert.deepEqual(problems, [], problems.join('\n'));
    assert.deepEqual(found, EXPECTED);
  });
});
