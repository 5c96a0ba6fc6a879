// The dashboard's audit page /teams/<team_id>/audit/ over HTTP: owners and admins read it (a member
// gets the 403 page, an outsider the 404 page, a visitor the login page), newest first with the
// changes made on the dashboard's own forms, filters, pages, a bad date as a 400 page; no form or
// method changes an entry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PageClient } from '../accounts/page-client.ts';
import { TEST_PASSWORD, startApp, type TestApp } from '../support/app.ts';
import { castTeam, makeCast, type Cast } from '../teams/fixtures.ts';

describe('the audit page', () => {
  let t: TestApp;
  let cast: Cast;
  let teamId: string;
  const clients = {} as Record<keyof Cast, PageClient>;
  const page = (query = '') => `/teams/${teamId}/audit/${query}`;
  const actionsOn = (html: string) => [...html.matchAll(/data-action="([^"]+)"/g)].map((m) => m[1]);

  before(async () => {
    t = await startApp();
    cast = await makeCast(t);
    teamId = await castTeam(t, cast);
    for (const who of Object.keys(cast) as (keyof Cast)[]) {
      clients[who] = new PageClient(t);
      await clients[who].login(cast[who].email, TEST_PASSWORD);
    }
    // Two changes made on the dashboard's own forms, by the owner's session.
    await clients.owner.get(`/teams/${teamId}/settings/`);
    assert.equal(
      (await clients.owner.post(`/teams/${teamId}/settings/`, { name: 'Audited Inc', slug: 'audited-inc' })).statusCode,
      303,
    );
    await clients.owner.get(`/teams/${teamId}/`);
    assert.equal(
      (await clients.owner.post(`/teams/${teamId}/members/${cast.member.id}/role/`, { role: 'admin' })).statusCode,
      303,
    );
  });
  after(() => t?.close());

  it('shows owners and admins every change, newest first, with who made it and through what', async () => {
    for (const who of ['owner', 'admin'] as const) {
      const res = await clients[who].get(page());
      assert.equal(res.statusCode, 200, who);
      assert.deepEqual(actionsOn(res.body), [
        'team.member.role_changed',
        'team.updated',
        'team.member.added',
        'team.member.added',
        'team.created',
      ]);
    }
    const html = (await clients.owner.get(page())).body;
    const row = html.slice(
      html.indexOf('data-action="team.updated"'),
      html.indexOf('</tr>', html.indexOf('data-action="team.updated"')),
    );
    assert.match(
      row,
      new RegExp(
        `>${cast.owner.email}</a><br><span class="muted">via browser session [0-9a-f]{16} from 127\\.0\\.0\\.1`,
      ),
    );
    assert.match(row, /name: Team \d+ → Audited Inc<br>slug: team-\d+ → audited-inc/);
    assert.match(html, /role: member → admin/);
    assert.match(html, /via svc CLI/, 'the fixtures joined the members through the CLI');
    const team = await clients.owner.get(`/teams/${teamId}/`);
    assert.match(team.body, new RegExp(`<a href="/teams/${teamId}/audit/">Audit log</a>`), 'the team page links to it');
  });

  it('a member gets the 403 page, an outsider the 404 page, a visitor the login page', async () => {
    const member = await clients.member.get(page());
    assert.equal(member.statusCode, 200, 'the member was made an admin above');
    const plain = await t.user();
    await t.member(teamId, plain.id, 'member');
    const browser = new PageClient(t);
    await browser.login(plain.email, TEST_PASSWORD);
    const refused = await browser.get(page());
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /Only owners and admins of the team can read its audit log/);
    assert.doesNotMatch(refused.body, /data-action=/);
    const outsider = await clients.outsider.get(page());
    assert.equal(outsider.statusCode, 404);
    assert.doesNotMatch(outsider.body, /data-action=/);
    const visitor = await new PageClient(t).get(page());
    assert.equal(visitor.statusCode, 303);
    assert.match(String(visitor.headers.location), /^\/accounts\/login\/\?next=/);
  });

  it('filters by action, person and dates; pages with older/newer links; a bad date is a 400 page', async () => {
    const byAction = await clients.owner.get(page('?action=team.member.added&since=&until='));
    assert.deepEqual(actionsOn(byAction.body), ['team.member.added', 'team.member.added', 'team.member.added']);
    const byOwner = await clients.owner.get(page(`?actor_id=${cast.owner.id}`));
    assert.deepEqual(actionsOn(byOwner.body), ['team.member.role_changed', 'team.updated']);
    assert.match(
      byOwner.body,
      new RegExp(`<input type="hidden" name="actor_id" value="${cast.owner.id}">`),
      'the filter form keeps the person',
    );
    const tomorrow = new Date(Date.now() + 86400_000).toISOString().slice(0, 10);
    assert.deepEqual(actionsOn((await clients.owner.get(page(`?since=${tomorrow}`))).body), []);
    assert.equal(actionsOn((await clients.owner.get(page(`?until=${tomorrow}`))).body).length, 6);

    const first = await clients.owner.get(page('?page_size=4'));
    assert.equal(actionsOn(first.body).length, 4);
    const older = /<a href="http:\/\/testserver(\/teams\/[^"]+)">Older entries<\/a>/
      .exec(first.body)![1]
      .replaceAll('&amp;', '&');
    const second = await clients.owner.get(older);
    assert.deepEqual(actionsOn(second.body), ['team.member.added', 'team.created']);
    assert.match(second.body, />Newer entries</);

    for (const query of ['?since=yesterday', '?until=2026-02-30', '?action=team.exploded', '?cursor=forged']) {
      const res = await clients.owner.get(page(query));
      assert.equal(res.statusCode, 400, query);
      assert.doesNotMatch(res.body, /data-action=/);
    }
  });

  it('offers no way to change an entry', async () => {
    const html = (await clients.owner.get(page())).body;
    const main = html.slice(html.indexOf('<main>'), html.indexOf('</main>'));
    assert.doesNotMatch(main, /method="post"/i, 'no form posts');
    const before = await t.ctx.db.kysely
      .selectFrom('audit_entries')
      .selectAll()
      .where('team_id', '=', teamId)
      .execute();
    const posted = await clients.owner.post(page(), { action: 'team.created' });
    assert.equal(posted.statusCode, 405, 'the page answers GET only');
    assert.deepEqual(
      await t.ctx.db.kysely.selectFrom('audit_entries').selectAll().where('team_id', '=', teamId).execute(),
      before,
    );
  });
});
