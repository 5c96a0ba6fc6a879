// /teams/: the viewer's teams and the "Create team" form (Name, Slug optional). Creating one goes
// through createTeam, as POST /api/v1/teams/ does, and lands on the new team's page.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { attempt } from '../web/refusals.ts';
import { requireUser } from '../http/identity.ts';
import { formString } from '../web/forms.ts';
import { renderPage, seeOther, setNotice } from '../web/render.ts';
import { teamsOverview } from './overview.ts';
import { NAME_MAX, createTeam } from './teams.ts';

interface CreateForm {
  name: string;
  slug: string;
}

export function registerTeamListPages(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  async function show(
    reply: FastifyReply,
    userId: number,
    extra: { form?: CreateForm; error?: string; status?: number } = {},
  ) {
    return renderPage(
      reply,
      'teams/views/teams',
      {
        title: 'Teams',
        teams: await teamsOverview(ctx.db, userId),
        form: extra.form ?? { name: '', slug: '' },
        nameMax: NAME_MAX,
        error: extra.error ?? null,
      },
      { status: extra.status ?? 200 },
    );
  }

  pages.get('/teams/', async (request, reply) => show(reply, requireUser(request).user.id));

  pages.post('/teams/', async (request, reply) => {
    const user = requireUser(request).user;
    const form: CreateForm = {
      name: formString(request, 'name', { max: 500 }),
      slug: formString(request, 'slug', { max: 200 }),
    };
    const created = await attempt(() =>
      createTeam(
        db,
        { name: form.name, slug: form.slug === '' ? undefined : form.slug, ownerId: user.id },
        requestActor(request, ctx.clientAddresses),
      ),
    );
    if (!created.ok) return show(reply, user.id, { form, error: created.message, status: created.status });
    setNotice(reply, `The team ${created.value.name} has been created.`);
    return seeOther(reply, `/teams/${created.value.id}/`);
  });
}
