// /teams/<team_id>/settings/ (owner, admin): rename the team, change its slug, through updateTeam as
// PATCH /api/v1/teams/<id>/ does. A member gets the 403 page with the policy's sentence.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { requestActor } from '../audit/actor.ts';
import { attempt } from '../web/refusals.ts';
import { formString } from '../web/forms.ts';
import { renderPage, seeOther, setNotice } from '../web/render.ts';
import { memberTeam, refuseWith, type TeamPageContext } from './page-access.ts';
import { refuseTeamUpdate } from './policy.ts';
import { NAME_MAX, updateTeam } from './teams.ts';

interface SettingsForm {
  name: string;
  slug: string;
}

function show(
  reply: FastifyReply,
  access: TeamPageContext,
  form: SettingsForm,
  extra: { error?: string; status?: number } = {},
) {
  return renderPage(
    reply,
    'teams/views/settings',
    {
      title: `Settings of ${access.team.name}`,
      team: access.team,
      base: access.base,
      form,
      nameMax: NAME_MAX,
      error: extra.error ?? null,
    },
    { status: extra.status ?? 200 },
  );
}

export function registerTeamSettingsPage(pages: FastifyInstance, ctx: AppContext) {
  const db = ctx.db.kysely;

  pages.get('/teams/:team_id/settings/', async (request, reply) => {
    const access = await memberTeam(db, request);
    refuseWith(refuseTeamUpdate(access.team.role));
    return show(reply, access, { name: access.team.name, slug: access.team.slug });
  });

  pages.post('/teams/:team_id/settings/', async (request, reply) => {
    const access = await memberTeam(db, request);
    refuseWith(refuseTeamUpdate(access.team.role));
    const form: SettingsForm = {
      name: formString(request, 'name', { max: 500 }),
      slug: formString(request, 'slug', { max: 200 }),
    };
    const saved = await attempt(() =>
      updateTeam(db, access.team.id, { name: form.name, slug: form.slug }, requestActor(request, ctx.clientAddresses)),
    );
    if (!saved.ok) return show(reply, access, form, { error: saved.message, status: saved.status });
    setNotice(reply, 'The team settings have been saved.');
    return seeOther(reply, `${access.base}settings/`);
  });
}
