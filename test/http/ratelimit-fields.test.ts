// The IETF RateLimit fields as a client library reads them: RateLimit-Policy and RateLimit parse as
// RFC 9651 structured fields (with the structured-headers package, not our own code), name the
// bucket that applied, agree with X-RateLimit-* and the configured SERVICE_THROTTLE_* on every
// answer while counting down to the 429, and the 429 is the registered quota-exceeded problem. For
// each bucket (anon, user, auth), on API routes and on the raw OAuth endpoints. With
// TEST_REDIS_URL set the counting is rate-limiter-flexible's in Redis, and the values must agree
// there too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Token, isInnerList, parseList, serializeList } from 'structured-headers';
import { bearer, TEST_PASSWORD } from '../support/app.ts';
import { postForm, startOAuthApp, type OAuthTestApp } from '../oauth/helpers.ts';

const QUOTA_EXCEEDED = 'https://iana.org/assignments/http-problem-types#quota-exceeded';
const SETTINGS = {
  SERVICE_THROTTLE_ANON: '3/minute',
  SERVICE_THROTTLE_USER: '4/hour',
  SERVICE_THROTTLE_AUTH: '5/minute',
};
const SPECS = { anon: { q: 3, w: 60 }, user: { q: 4, w: 3600 }, auth: { q: 5, w: 60 } };
type Policy = keyof typeof SPECS;

/** A response's headers, whether from inject (an object) or fetch (Headers). */
type HeaderSource = Record<string, unknown> | Headers;

function header(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const value = headers[name.toLowerCase()];
  // Sent twice, inject shows an array: one field line is expected, so that is a failure here.
  assert.ok(
    value === undefined || typeof value === 'string' || typeof value === 'number',
    `${name} sent once: ${JSON.stringify(value)}`,
  );
  return value === undefined ? null : String(value);
}

/** The one member of a structured-field List, as a client library parses it: [name, parameters]. */
function onlyItem(field: string, value: string | null): [string, Map<string, unknown>] {
  assert.ok(value !== null, `${field} is present`);
  const list = parseList(value);
  assert.equal(list.length, 1, `${field}: one policy: ${value}`);
  const member = list[0];
  assert.ok(!isInnerList(member), `${field}: an Item, not an Inner List`);
  const [name, params] = member;
  assert.equal(typeof name, 'string', `${field}: the policy is an sf-string (not a token): ${value}`);
  assert.ok(!(name instanceof Token));
  // Written in the canonical form a serializer produces (no stray spaces, no other spelling).
  assert.equal(serializeList(list), value, `${field} is canonical`);
  return [name as string, params as Map<string, unknown>];
}

/**
 * Checks both fields of one answer against X-RateLimit-* and the configured spec; returns the
 * RateLimit parameters.
 */
function checkFields(headers: HeaderSource, policy: Policy, spec = SPECS[policy]): { r: number; t: number } {
  const [policyName, policyParams] = onlyItem('RateLimit-Policy', header(headers, 'RateLimit-Policy'));
  assert.equal(policyName, policy);
  assert.deepEqual([...policyParams.keys()], ['q', 'w'], 'q and w only: no partition key');
  assert.equal(policyParams.get('q'), spec.q);
  assert.equal(policyParams.get('w'), spec.w);
  assert.equal(String(policyParams.get('q')), header(headers, 'X-RateLimit-Limit'), 'q = X-RateLimit-Limit');

  const [limitName, limitParams] = onlyItem('RateLimit', header(headers, 'RateLimit'));
  assert.equal(limitName, policy, 'RateLimit names the policy RateLimit-Policy describes');
  assert.deepEqual([...limitParams.keys()], ['r', 't'], 'r and t only: no partition key');
  const r = limitParams.get('r');
  const t = limitParams.get('t');
  assert.ok(Number.isInteger(r) && Number.isInteger(t), `integers: r=${r} t=${t}`);
  assert.equal(String(r), header(headers, 'X-RateLimit-Remaining'), 'r = X-RateLimit-Remaining');
  assert.equal(String(t), header(headers, 'X-RateLimit-Reset'), 't = X-RateLimit-Reset');
  assert.ok((t as number) >= 0 && (t as number) <= spec.w, `t within the window: ${t}`);
  return { r: r as number, t: t as number };
}

/** The 429 of a bucket: Retry-After at least t, the quota-exceeded problem naming the policy. */
function checkRefusal(status: number, headers: HeaderSource, body: any, policy: Policy) {
  assert.equal(status, 429);
  const { r, t } = checkFields(headers, policy);
  assert.equal(r, 0);
  assert.ok(t >= 1, `t at least 1 while refused: ${t}`);
  const retryAfter = header(headers, 'Retry-After');
  assert.match(String(retryAfter), /^[1-9]\d*$/);
  assert.ok(Number(retryAfter) >= t, `Retry-After ${retryAfter} >= t ${t}`);
  assert.match(String(header(headers, 'Content-Type')), /^application\/problem\+json/);
  const seconds = Number(retryAfter);
  assert.deepEqual(body, {
    type: QUOTA_EXCEEDED,
    title: 'Too Many Requests',
    status: 429,
    detail: `Request was throttled. Expected available in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
    request_id: header(headers, 'X-Request-ID'),
    'violated-policies': [policy],
  });
}

describe('IETF RateLimit fields', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp(SETTINGS);
  });
  after(() => t?.close());

  it('counts in the store of this run (Redis with TEST_REDIS_URL, else in process)', () => {
    assert.equal(t.ctx.throttle.mode, process.env.TEST_REDIS_URL ? 'redis' : 'memory');
  });

  it('anon: answers of every kind count down to the 429, refused before routing included', async () => {
    const remoteAddress = '192.0.2.40';
    const requests = ['/api/v1/me/', '/api/v1/no-such-path/', '/api/v1/teams/%ZZ/'];
    const statuses = [];
    for (let i = 0; i < requests.length; i++) {
      const res = await t.inject({ url: requests[i], remoteAddress });
      statuses.push(res.statusCode);
      assert.equal(checkFields(res.headers, 'anon').r, SPECS.anon.q - 1 - i, `request ${i + 1}`);
    }
    assert.deepEqual(statuses, [401, 404, 400]);
    // Refused twice: with Redis the second is answered from the library's local block.
    for (let i = 0; i < 2; i++) {
      const refused = await t.inject({ url: '/api/v1/me/', remoteAddress });
      checkRefusal(refused.statusCode, refused.headers, refused.json(), 'anon');
    }
    // Another address: a bucket of its own, the same policy.
    const other = await t.inject({ url: '/api/v1/me/', remoteAddress: '192.0.2.41' });
    assert.equal(checkFields(other.headers, 'anon').r, SPECS.anon.q - 1);
  });

  it('user: an authenticated caller counts down in the user policy, then 429', async () => {
    const user = await t.user();
    const token = await t.token(user.id, ['read:profile']);
    for (let i = 0; i < SPECS.user.q; i++) {
      const res = await t.inject({ url: '/api/v1/me/', headers: bearer(token), remoteAddress: '192.0.2.50' });
      assert.equal(res.statusCode, 200);
      const { r, t: reset } = checkFields(res.headers, 'user');
      assert.equal(r, SPECS.user.q - 1 - i);
      assert.ok(reset > SPECS.user.w - 60, `an hour's window: ${reset}`);
    }
    // From another address: the same user bucket.
    const refused = await t.inject({ url: '/api/v1/me/', headers: bearer(token), remoteAddress: '192.0.2.51' });
    checkRefusal(refused.statusCode, refused.headers, refused.json(), 'user');
  });

  it('auth: a credential-issuing API route counts down in the auth policy, then 429', async () => {
    const remoteAddress = '192.0.2.60';
    for (let i = 0; i < SPECS.auth.q; i++) {
      // A new e-mail each time, so that the login-failure lockout never applies.
      const res = await t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        remoteAddress,
        payload: { email: `nobody${i}@example.com`, password: 'wrong' },
      });
      assert.equal(res.statusCode, 401);
      assert.equal(checkFields(res.headers, 'auth').r, SPECS.auth.q - 1 - i);
    }
    const refused = await t.inject({
      method: 'POST',
      url: '/api/auth/token/',
      remoteAddress,
      payload: { email: 'nobody@example.com', password: 'wrong' },
    });
    checkRefusal(refused.statusCode, refused.headers, refused.json(), 'auth');
  });

  it('auth: the OAuth token endpoint (answered on the raw response) counts down the same way, then 429', async () => {
    const form = { grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: 'nope' };
    for (let i = 0; i < SPECS.auth.q; i++) {
      const res = await postForm(`${t.base}/o/token/`, form);
      assert.equal(res.status, 401, JSON.stringify(res.body));
      assert.equal(checkFields(res.headers, 'auth').r, SPECS.auth.q - 1 - i);
    }
    const refused = await postForm(`${t.base}/o/token/`, form);
    checkRefusal(refused.status, refused.headers, refused.body, 'auth');
  });

  it('answers without X-RateLimit-* carry no RateLimit fields either', async () => {
    const health = await t.inject({ url: '/healthz' });
    const jwks = await t.inject({ url: '/o/jwks/' });
    for (const res of [health, jwks]) {
      assert.equal(res.statusCode, 200);
      for (const name of ['x-ratelimit-limit', 'ratelimit-policy', 'ratelimit'])
        assert.equal(res.headers[name], undefined, name);
    }
  });

  it('every count above was shared through Redis when configured (no local fallback)', () => {
    assert.equal(t.ctx.throttle.usingFallback, false);
  });
});

describe('IETF RateLimit fields: the login-failure lockout is not a quota answer', () => {
  let t: OAuthTestApp;
  before(async () => {
    t = await startOAuthApp({ SERVICE_THROTTLE_AUTH: '10/minute' });
  });
  after(() => t?.close());

  it('its 429 keeps about:blank and its own Retry-After; the fields describe the auth bucket it did not exhaust', async () => {
    const user = await t.user();
    const remoteAddress = '192.0.2.70';
    for (let i = 0; i < 5; i++) {
      const res = await t.inject({
        method: 'POST',
        url: '/api/auth/token/',
        remoteAddress,
        payload: { email: user.email, password: 'wrong' },
      });
      assert.equal(res.statusCode, 401);
    }
    const locked = await t.inject({
      method: 'POST',
      url: '/api/auth/token/',
      remoteAddress,
      payload: { email: user.email, password: TEST_PASSWORD },
    });
    assert.equal(locked.statusCode, 429);
    const body = locked.json();
    assert.equal(body.type, 'about:blank');
    assert.equal(body['violated-policies'], undefined);
    assert.match(body.detail, /^Request was throttled\. Expected available in \d+ seconds?\.$/);
    const seconds = Number(locked.headers['retry-after']);
    assert.ok(seconds > 60 && seconds <= 900, `the lockout's own wait: ${seconds}`);
    const { r } = checkFields(locked.headers, 'auth', { q: 10, w: 60 });
    assert.equal(r, 10 - 6);
  });
});
