/** The dashboard's pages (DESIGN section 10), each group its own plugin inside the web scope (`http/web/plugin.ts`). */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../../deps.js';
import { authPages } from './auth-pages.js';
import { invitePages } from './invite-pages.js';
import { onboardingPages } from './onboarding-pages.js';
import { agentPages } from './agent-pages.js';

export const dashboardPages: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  await app.register(authPages, { deps });
  await app.register(invitePages, { deps });
  await app.register(onboardingPages, { deps });
  await app.register(agentPages, { deps });
};
