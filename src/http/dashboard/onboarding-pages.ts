/**
 * The seed's onboarding, in its order: organisation -> agent (type API Provider, name,
 * upstream base URL, key, extra headers, a connection test) -> the tool -> the page with
 * org ID, agent ID, the token (shown this once) and the tool's configuration, rendered by
 * the code `engram connect` prints with (`connect/render.ts`), not a copy of it.
 */
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { EngramError } from '../../errors.js';
import type { TokenRecord } from '../../domain/types.js';
import { CLIENT_KINDS, findClientKind } from '../../clients/index.js';
import { locations } from '../../connect/locations.js';
import { renderText } from '../../connect/render.js';
import { sdkBaseUrl } from '../../connect/sdk-env.js';
import { issueToken } from '../management/issue-token.js';
import { createAgentFromBody } from '../management/create-agent.js';
import { refuseForbiddenUpstream, upstreamBaseUrl } from '../management/agent-input.js';
import { requireSignedIn } from '../web/session.js';
import { softBreaks } from '../web/soft-breaks.js';
import { ownAgent, ownOrg, userOf, type AgentParams, type OrgParams } from './access.js';
import { checkUpstreamBody, type ConnectionCheck } from '../upstream-check.js';
import { agentBody, agentInfo, text, type AgentForm } from './forms.js';
import { dashboardPolicies } from './this-machine.js';

/**
 * Engram's one address for every agent, the token saying which: what the last page shows
 * first, with the variables the OpenAI and Anthropic SDKs (and the many clients that read
 * the same ones) take, in the `.env` form.
 */
function shortAddress(serverUrl: string, token: string) {
  const openai = sdkBaseUrl('openai', serverUrl);
  const anthropic = sdkBaseUrl('anthropic', serverUrl);
  return { openai, anthropic, env: [`OPENAI_BASE_URL=${openai}`, `OPENAI_API_KEY=${token}`, `ANTHROPIC_BASE_URL=${anthropic}`, `ANTHROPIC_API_KEY=${token}`].join('\n') };
}

/** Paths as the person's own machine has them: `~/.codex/config.toml`. */
const HOME = locations({ home: '~' });

export const onboardingPages: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;
  // Whoever signed in is a dashboard user, not the operator: their upstreams live under
  // the users' address policy (`ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE`), checked here and on every connection;
  // on a personal install, a request from elsewhere (a tunnel) is held to the strict one.
  const policiesFor = dashboardPolicies(deps.config);
  app.addHook('preHandler', requireSignedIn);

  app.get('/', async (request, reply) => {
    const user = userOf(request);
    const orgs = await deps.accounts.agentsOf(user);
    if (orgs.length === 0) return reply.redirect('/orgs/new', 303);
    return reply.page('home', { title: 'Your agents', orgs });
  });

  app.get('/orgs/new', async (_request, reply) => reply.page('org-new', { title: 'New organisation', step: 1 }));

  app.post<{ Body: { name?: string } }>('/orgs/new', { preValidation: app.csrfProtection }, async (request, reply) => {
    const name = text(request.body?.name);
    try {
      const org = await deps.accounts.createOrg(userOf(request), name);
      return reply.redirect(`/orgs/${org.id}/agents/new`, 303);
    } catch (error) {
      if (error instanceof EngramError && (error.code === 'conflict' || error.code === 'invalid_request')) {
        const message = error.code === 'conflict' ? 'That organisation name is taken: choose another.' : error.message;
        return reply.page('org-new', { title: 'New organisation', step: 1, name, error: message }, error.status);
      }
      throw error;
    }
  });

  // `localModels`: this person may point the agent at a model server on Engram's own machine or network, and is told so.
  const agentForm = async (request: FastifyRequest, reply: FastifyReply, org: { id: string; name: string }, form: AgentForm, extra: { error?: string; check?: ConnectionCheck } = {}, status = 200) =>
    reply.page('agent-new', { title: 'New agent', step: 2, org, form, localModels: policiesFor(request).policies.user.allowPrivate, ...extra }, status);

  app.get<{ Params: OrgParams }>('/orgs/:org/agents/new', async (request, reply) => {
    const { org } = await ownOrg(deps, request);
    return agentForm(request, reply, org, {});
  });

  // The upstream as saving the agent would take it (`checkUpstreamBody`: the same parser);
  // the upstream client refuses the same addresses (`'user'`), by the URL and by where its
  // name resolves.
  const check = async (request: FastifyRequest, form: AgentForm): Promise<ConnectionCheck> => {
    try {
      if (!text(form.base_url)) return { ok: false, summary: 'Give the base URL first.' };
      const body = agentBody(form);
      // The upstream client holds the process's policy; a stricter one for this request is checked on the URL first.
      const held = policiesFor(request);
      if (held.stricter) refuseForbiddenUpstream(upstreamBaseUrl(text(form.base_url), 'upstream.base_url'), held.policies.user);
      return await checkUpstreamBody(deps.upstream, body.upstream, 'user');
    } catch (error) {
      // The form's own mistakes (the agent body's parser): Engram's messages about what was typed.
      if (error instanceof EngramError && error.status < 500) return { ok: false, summary: error.message.replaceAll('`', '"') };
      throw error;
    }
  };

  // htmx: the result alone, swapped in under the button.
  app.post<{ Params: OrgParams; Body: AgentForm }>('/orgs/:org/agents/check', { preValidation: app.csrfProtection }, async (request, reply) => {
    await ownOrg(deps, request);
    return reply.view('connection-check.eta', { check: await check(request, request.body ?? {}), softBreaks });
  });

  app.post<{ Params: OrgParams; Body: AgentForm & { intent?: string } }>('/orgs/:org/agents/new', { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org } = await ownOrg(deps, request);
    const form = request.body ?? {};
    // Without JavaScript the "Test connection" button submits the whole form.
    if (form.intent === 'check') return agentForm(request, reply, org, form, { check: await check(request, form) });
    let agent;
    try {
      ({ agent } = await createAgentFromBody(control, { orgId: org.id, body: agentBody(form), setBy: 'user', policies: policiesFor(request).policies }));
    } catch (error) {
      if (error instanceof EngramError && error.status < 500) return agentForm(request, reply, org, form, { error: error.message.replaceAll('`', '"') }, error.status);
      throw error;
    }
    return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/connect`, 303);
  });

  app.get<{ Params: AgentParams }>('/orgs/:org/agents/:agent/connect', async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const tokens = await control.directory.listTokens(agent.id);
    const connected = CLIENT_KINDS.filter((kind) => toolToken(tokens, kind.name)).map((kind) => kind.name);
    return reply.page('connect-tool', { title: 'Choose the tool', step: 3, org, agent, kinds: CLIENT_KINDS, connected });
  });

  app.post<{ Params: AgentParams; Body: { tool?: string; intent?: string } }>('/orgs/:org/agents/:agent/connect', { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const kind = findClientKind(text(request.body?.tool));
    if (!kind) {
      return reply.page('connect-tool', { title: 'Choose the tool', step: 3, org, agent, kinds: CLIENT_KINDS, connected: [], error: 'Choose one of the tools.' }, 400);
    }
    // The token made for this tool before: reused, not minted again on every visit. It is
    // stored hashed, so the page can only name it; a new one is made when the person asks.
    // A new one sits beside the old rather than replacing it: the old may be in use on
    // another machine or in CI, and revoking it from here would break that tool without
    // warning. The page says so, and the Tokens tab (with "last used") revokes it.
    const existing = toolToken(await control.directory.listTokens(agent.id), kind.name);
    const mint = !existing || text(request.body?.intent) === 'new-token';
    const token = mint ? (await issueToken(control, agent, kind.name)).token : undefined;
    const info = agentInfo(agent, deps.publicUrl());
    const setup = kind.plan({ agent: info, locations: HOME, token, model: undefined });
    const configuration = renderText({
      kind,
      agent: info,
      setup,
      locations: HOME,
      token,
      minted: mint,
      tokenHint: existing ? `the token "${existing.name}" (${existing.prefix}…) you saved, or a new one` : 'shown once on this page',
    }).join('\n');
    return reply.page('connected', {
      title: 'Connect your tool',
      step: 4,
      org,
      agent,
      kind,
      token,
      // Without a new token: the one that exists. With one: the one it sits beside.
      existing,
      info,
      configuration,
      short: shortAddress(info.serverUrl, token ?? '<your token>'),
    });
  });
};

/** The newest live token made for a tool (Connect names each after its tool), if any. */
function toolToken(tokens: readonly TokenRecord[], tool: string): TokenRecord | undefined {
  return tokens.filter((token) => token.name === tool && token.revokedAt === null).sort((a, b) => b.createdAt - a.createdAt)[0];
}
