// The teams capability's dashboard pages (registered by dashboard/routes.ts, which checks the login
// and CSRF for all of them): the list and "Create team", a team's page and its forms, its settings.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.ts';
import { registerTeamListPages } from './pages-list.ts';
import { registerMemberPages } from './pages-members.ts';
import { registerTeamSettingsPage } from './pages-settings.ts';
import { registerTeamPage } from './pages-team.ts';

export function registerTeamPages(pages: FastifyInstance, ctx: AppContext) {
  registerTeamListPages(pages, ctx);
  registerTeamPage(pages, ctx);
  registerMemberPages(pages, ctx);
  registerTeamSettingsPage(pages, ctx);
}
