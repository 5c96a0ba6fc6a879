// The one error model as each surface answers it: every DomainError kind thrown by a test-only API
// route (problem details), by a test-only page (the HTML error page) and by a CLI command (the `svc:`
// line and exit code). The teams, accounts, tokens and CLI tests check the real refusals word for word;
// this one checks that no kind is missing from any surface.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UsageError } from '../../src/cli/framework.ts';
import { cliFailureOf } from '../../src/http/error-answers.ts';
import {
  ConflictError,
  ForbiddenError,
  GoneError,
  NotFoundError,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
  type DomainError,
} from '../../src/util/domain-errors.ts';
import { usePageErrors } from '../../src/web/render.ts';
import { startApp, type TestApp } from '../support/app.ts';

const FIELD = [{ field: 'name', message: 'Too long.' }];

/** Per kind: the error thrown and what the API answers (status, title, extra members and headers). */
const CASES: Record<
  string,
  { error: () => DomainError; status: number; title: string; errors?: unknown; retryAfter?: string }
> = {
  invalid: {
    error: () => new ValidationError('Request is invalid.', FIELD),
    status: 400,
    title: 'Bad Request',
    errors: FIELD,
  },
  'invalid-bare': {
    error: () => new ValidationError('A slug is 1 to 50 characters.'),
    status: 400,
    title: 'Bad Request',
  },
  unauthenticated: {
    error: () => new UnauthenticatedError('Invalid refresh token.'),
    status: 401,
    title: 'Unauthorized',
  },
  forbidden: { error: () => new ForbiddenError('Only owners may do that.'), status: 403, title: 'Forbidden' },
  'not-found': { error: () => new NotFoundError(), status: 404, title: 'Not Found' },
  conflict: { error: () => new ConflictError('The slug acme is already taken.'), status: 409, title: 'Conflict' },
  gone: { error: () => new GoneError('This invitation has expired.'), status: 410, title: 'Gone' },
  unavailable: {
    error: () => new UnavailableError('Try again shortly.', 7),
    status: 503,
    title: 'Service Unavailable',
    retryAfter: '7',
  },
};

describe('one error model', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp(
      {},
      {
        beforeReady: (app) => {
          app.get('/api/v1/test-errors/:kind/', async (request) => {
            throw CASES[(request.params as { kind: string }).kind].error();
          });
          app.register(async (pages) => {
            usePageErrors(pages);
            pages.get('/test-errors/:kind/', async (request) => {
              throw CASES[(request.params as { kind: string }).kind].error();
            });
          });
        },
      },
    );
  });
  after(() => t.close());

  it('the API answers each kind as problem details with its status, detail and extra members', async () => {
    for (const [kind, expected] of Object.entries(CASES)) {
      const response = await t.inject({
        method: 'GET',
        url: `/api/v1/test-errors/${kind}/`,
        headers: { 'x-request-id': `req-${kind}` },
      });
      assert.equal(response.statusCode, expected.status, kind);
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8', kind);
      assert.equal(response.headers['retry-after'], expected.retryAfter, kind);
      assert.deepEqual(
        response.json(),
        {
          type: 'about:blank',
          title: expected.title,
          status: expected.status,
          detail: expected.error().message,
          request_id: `req-${kind}`,
          ...(expected.errors ? { errors: expected.errors } : {}),
        },
        kind,
      );
      // Member order is part of the answer.
      assert.deepEqual(
        Object.keys(response.json()).slice(0, 5),
        ['type', 'title', 'status', 'detail', 'request_id'],
        kind,
      );
    }
  });

  it('a page answers each kind with the HTML error page, the same status and the sentence', async () => {
    for (const [kind, expected] of Object.entries(CASES)) {
      const response = await t.inject({ method: 'GET', url: `/test-errors/${kind}/` });
      assert.equal(response.statusCode, expected.status, kind);
      assert.match(String(response.headers['content-type']), /^text\/html/, kind);
      assert.equal(response.headers['retry-after'], expected.retryAfter, kind);
      const sentence = expected.error().message;
      assert.ok(response.body.includes(sentence), `${kind}: the page shows "${sentence}"`);
    }
  });

  it('the CLI prints one line for each kind: a broken rule is a bad argument (exit 2, usage), the rest exit 1', () => {
    for (const [kind, expected] of Object.entries(CASES)) {
      const failure = cliFailureOf(expected.error());
      const badArgument = expected.status === 400;
      assert.deepEqual(
        failure,
        { line: expected.error().message, exitCode: badArgument ? 2 : 1, showUsage: badArgument, expected: true },
        kind,
      );
    }
    assert.deepEqual(cliFailureOf(new UsageError('--name is required')), {
      line: '--name is required',
      exitCode: 2,
      showUsage: true,
      expected: true,
    });
    assert.deepEqual(cliFailureOf(new Error('unable to open database file\nmore')), {
      line: 'unable to open database file',
      exitCode: 1,
      showUsage: false,
      expected: false,
    });
  });
});
