// The Kysely adapter of oidc-provider on the real database (SQLite, or PostgreSQL with
// TEST_DATABASE_URL): every lookup the library makes, single-use consumption, grant revocation,
// the client secret digest, and the purge of expired rows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KyselyAdapter, deleteExpiredOAuthRows } from '../../src/oauth/adapter.ts';
import { startApp, type TestApp } from '../support/app.ts';

describe('oauth Kysely adapter', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp();
  });
  after(() => t?.close());

  const adapter = (model: string) => new KyselyAdapter(t.ctx.db.kysely, model);

  it('upsert and the three lookups', async () => {
    const codes = adapter('DeviceCode');
    await codes.upsert('dc-1', { grantId: 'g-1', userCode: 'BCDFGHJK', params: { scope: 'read:profile' } }, 600);
    assert.deepEqual(await codes.find('dc-1'), {
      grantId: 'g-1',
      userCode: 'BCDFGHJK',
      params: { scope: 'read:profile' },
    });
    assert.deepEqual((await codes.findByUserCode('BCDFGHJK'))?.grantId, 'g-1');
    assert.equal(await codes.findByUserCode('XXXXXXXX'), undefined);
    // Same id, another model: separate.
    assert.equal(await adapter('AccessToken').find('dc-1'), undefined);
    await codes.upsert('dc-1', { grantId: 'g-1', userCode: 'BCDFGHJK', accountId: '7' }, 600);
    assert.equal((await codes.find('dc-1'))?.accountId, '7');

    const sessions = adapter('Session');
    await sessions.upsert('s-1', { uid: 'u-1', accountId: '7' }, 3600);
    assert.equal((await sessions.findByUid('u-1'))?.accountId, '7');
  });

  it('consume marks once; a second consumption of a single-use artefact fails', async () => {
    const codes = adapter('AuthorizationCode');
    await codes.upsert('ac-1', { grantId: 'g-2' }, 60);
    await codes.consume('ac-1');
    const found = await codes.find('ac-1');
    assert.equal(typeof found?.consumed, 'number');
    await assert.rejects(codes.consume('ac-1'), (error: { error?: string }) => error.error === 'invalid_grant');
  });

  it('destroy and revokeByGrantId', async () => {
    const tokens = adapter('AccessToken');
    await tokens.upsert('at-1', { grantId: 'g-3' }, 3600);
    await tokens.upsert('at-2', { grantId: 'g-3' }, 3600);
    await tokens.upsert('at-3', { grantId: 'g-4' }, 3600);
    await adapter('RefreshToken').upsert('rt-1', { grantId: 'g-3' }, 3600);
    await tokens.revokeByGrantId('g-3');
    assert.equal(await tokens.find('at-1'), undefined);
    assert.equal(await tokens.find('at-2'), undefined);
    assert.ok(await tokens.find('at-3'));
    // Per model: the refresh token goes when the library revokes RefreshToken by grant.
    assert.ok(await adapter('RefreshToken').find('rt-1'));
    await tokens.destroy('at-3');
    assert.equal(await tokens.find('at-3'), undefined);
  });

  it('access tokens, refresh tokens and codes are stored under a digest, without their value', async () => {
    const tokens = adapter('AccessToken');
    await tokens.upsert('the-token-value', { jti: 'the-token-value', grantId: 'g-5', kind: 'AccessToken' }, 3600);
    const rows = await t.ctx.db.kysely
      .selectFrom('oauth_models')
      .selectAll()
      .where('model', '=', 'AccessToken')
      .where('grant_id', '=', 'g-5')
      .execute();
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].id, 'the-token-value');
    assert.ok(!rows[0].payload.includes('the-token-value'));
    assert.deepEqual(await tokens.find('the-token-value'), {
      grantId: 'g-5',
      kind: 'AccessToken',
      jti: 'the-token-value',
    });
    await tokens.destroy('the-token-value');
    assert.equal(await tokens.find('the-token-value'), undefined);
  });

  it('a client secret is stored as its digest', async () => {
    await adapter('Client').upsert('c-1', { client_id: 'c-1', client_secret: 'raw-secret-value' });
    const stored = await adapter('Client').find('c-1');
    assert.match(String(stored?.client_secret), /^sha256:/);
    assert.ok(!JSON.stringify(stored).includes('raw-secret-value'));
  });

  it('purges rows expired for more than a day, keeps the rest', async () => {
    const tokens = adapter('AccessToken');
    await tokens.upsert('old', { grantId: 'g-9' }, 1);
    await tokens.upsert('fresh', { grantId: 'g-9' }, 3600);
    await adapter('Client').upsert('c-2', { client_id: 'c-2' });
    const deleted = await deleteExpiredOAuthRows(t.ctx.db.kysely, Date.now() + 2 * 86_400_000);
    assert.ok(deleted >= 2);
    assert.equal(await tokens.find('old'), undefined);
    assert.ok(await adapter('Client').find('c-2'), 'clients never expire');
    const none = await deleteExpiredOAuthRows(t.ctx.db.kysely);
    assert.equal(none, 0);
  });
});
