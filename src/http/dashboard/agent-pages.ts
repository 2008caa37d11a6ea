/**
 * An agent's pages: overview (ids, addresses, counts, the root memory index as the model
 * sees it), reflections (search with the retrieval the management API uses, filter, view,
 * edit, delete, add by hand; the history a changed fact superseded, each with what
 * replaced it, restorable), tokens (create, revoke, last used) and extraction activity
 * (queued, running, failed, dead letters with retry). Changes go through the same core
 * code as the management API (`memory/hand-edits.ts`, `management/issue-token.ts`).
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Deps } from '../../deps.js';
import { REFLECTION_KINDS, type Agent, type Org, type Reflection, type ReflectionKind } from '../../domain/types.js';
import { tagAuthorLabel } from '../../domain/tag-authors.js';
import { shortBaseUrl } from '../../domain/base-urls.js';
import { byHandNote, subjectTags } from '../../domain/reflection-text.js';
import { EngramError } from '../../errors.js';
import { whileAsked } from '../while-asked.js';
import { searchWithRelevance, type SearchedReflection } from '../../memory/search-relevance.js';
import { barRule, relevanceAgainstBar } from '../../domain/relevance-words.js';
import { signalOf } from '../../conversation/request-log.js';
import { buildRootIndex, listAllReflections } from '../../memory/root-index.js';
import { issueToken } from '../management/issue-token.js';
import { agentJobs, jobKind, retryAgentDeadLetter } from '../../memory/agent-jobs.js';
import { reflectionRouteDeps } from '../memory-search-deps.js';
import { requireSignedIn } from '../web/session.js';
import { dayOf } from '../../observability/activity.js';
import type { DailyActivity } from '../../ports/activity.js';
import { activityChart, SERIES, type DayRow } from './activity-chart.js';
import { spendToday } from './spend.js';
import { nextStep } from './next-step.js';
import { ownAgent, type AgentParams } from './access.js';
import { agentInfo, text } from './forms.js';
import { requestLogView } from './request-log-view.js';

interface ReflectionParams extends AgentParams {
  id: string;
}

interface ReflectionForm {
  content?: string;
  kind?: string;
  topic?: string;
  tags?: string;
  /** The project it holds in; blank: everywhere. */
  scope?: string;
  /** The app's end user it is for (adding only); blank: the agent's own. */
  user?: string;
}

const PAGE = 50;
const DAYS = 14;
const DAY_MS = 86_400_000;

/** The reflections page lists current ones, the superseded ones (history), or both. */
const STATUSES = ['current', 'superseded', 'all'] as const;
type Status = (typeof STATUSES)[number];

function kindOf(raw: unknown): ReflectionKind | undefined {
  return REFLECTION_KINDS.find((kind) => kind === raw);
}

function statusOf(raw: unknown): Status {
  return STATUSES.find((status) => status === raw) ?? 'current';
}

/** The tags a person typed (Engram's markers among them are dropped by the edit, `createHandEdits`). */
function tagList(raw: unknown): string[] {
  return text(raw).split(',').map((tag) => tag.trim()).filter(Boolean).slice(0, 50);
}

/** How the reflection pages show tags: who wrote them, the subject tags only, and the markers as a note ("edited by hand"). */
const TAG_VIEW = { tagAuthor: tagAuthorLabel, subjectTags, byHandNote };

/** The last `DAYS` days, oldest first: the agent's activity counts and the reflections learnt that day. */
function perDay(activity: DailyActivity[], reflections: Reflection[], now: number): DayRow[] {
  const today = Math.floor(now / DAY_MS);
  const rows: DayRow[] = [];
  for (let age = DAYS - 1; age >= 0; age--) {
    const day = dayOf((today - age) * DAY_MS);
    const counted = activity.find((row) => row.day === day);
    rows.push({ day, requests: counted?.requests ?? 0, injected: counted?.injected ?? 0, extractions: counted?.extractions ?? 0, learnt: 0 });
  }
  for (const reflection of reflections) {
    const age = today - Math.floor(reflection.createdAt / DAY_MS);
    if (age >= 0 && age < DAYS) rows[DAYS - 1 - age]!.learnt++;
  }
  return rows;
}

export const agentPages: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control, reflections } = deps;
  const { search, retrieval, hand } = reflectionRouteDeps(deps, app.log);
  app.addHook('preHandler', requireSignedIn);
  const base = '/orgs/:org/agents/:agent';

  app.get<{ Params: AgentParams }>(base, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const [all, activity, tokens, jobs] = await Promise.all([
      listAllReflections(reflections, agent.id),
      control.activity.read(agent.id, dayOf(deps.now() - (DAYS - 1) * DAY_MS)),
      control.directory.listTokens(agent.id),
      agentJobs(deps.bus, agent.id),
    ]);
    const current = all.filter((r) => r.supersededBy === undefined);
    const index = (await control.indexes.get(agent.id)) ?? buildRootIndex(current);
    const days = perDay(activity, all, deps.now());
    return reply.page('agent', {
      title: agent.name,
      tab: 'overview',
      org,
      agent,
      info: agentInfo(agent, deps.publicUrl()),
      // Engram's one base URL, for every agent and protocol (the token says which agent): shown first.
      shortUrl: shortBaseUrl(deps.publicUrl()),
      index,
      counts: {
        factual: current.filter((r) => r.kind === 'factual').length,
        procedural: current.filter((r) => r.kind === 'procedural').length,
        superseded: all.length - current.length,
        used: all.reduce((sum, r) => sum + r.useCount, 0),
        tokens: tokens.filter((t) => t.revokedAt === null).length,
        queued: jobs.queued.length,
        dead: jobs.dead.length,
      },
      days,
      spend: spendToday(agent, activity, jobs, deps.now()),
      chart: activityChart(days),
      series: SERIES,
      // Before the first request, the overview's first card is the one thing to try.
      next: days.some((day) => day.requests > 0) ? undefined : nextStep(deps.publicUrl(), agent),
    });
  });

  const reflectionsPage = (reply: FastifyReply, org: Org, agent: Agent, context: Record<string, unknown>, status?: number) =>
    reply.page('agent-reflections', { title: `${agent.name}: reflections`, tab: 'reflections', org, agent, page: PAGE, ...TAG_VIEW, ...context }, status);

  /** The reflections that replaced these (a deleted one is missing), by id: each superseded row links to its replacement. */
  const replacersOf = async (agentId: string, rows: readonly Reflection[]): Promise<Record<string, Reflection>> => {
    const ids = [...new Set(rows.flatMap((r) => (r.supersededBy ? [r.supersededBy] : [])))];
    const found = await Promise.all(ids.map((id) => reflections.get(agentId, id)));
    return Object.fromEntries(found.flatMap((r) => (r ? [[r.id, r]] : [])));
  };

  app.get<{ Params: AgentParams; Querystring: { q?: string; kind?: string; source?: string; status?: string; offset?: string; scope?: string; user?: string } }>(`${base}/reflections`, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const q = text(request.query.q);
    const kind = kindOf(request.query.kind);
    const source = text(request.query.source);
    // One project's reflections (blank: every project's, and those that hold everywhere).
    const scope = text(request.query.scope) || undefined;
    // One end user's (blank: every user's, and the agent's own).
    const user = text(request.query.user) || undefined;
    // A search with either shows what a request of that project and user sees (DESIGN
    // section 13), verdicts included; without, everything, as a person managing the agent does.
    const visible = scope || user ? { ...(scope ? { scope } : {}), ...(user ? { user } : {}) } : undefined;
    // A search finds current reflections only (history is never found): the filter applies to listings.
    const status = q ? 'current' : statusOf(request.query.status);
    const offset = Math.max(0, Math.min(100_000, Number.parseInt(text(request.query.offset), 10) || 0));
    let rows: { reflection: Reflection }[];
    let more = false;
    // What a request saying `q` would get injected, by the injection's own retrieval (relevance rule, topK, budget),
    // and for every result its relevance against the agent's bar and why it would or would not be.
    let injected: string[] | undefined;
    let verdicts: Record<string, InjectionNote> | undefined;
    let bar: number | undefined;
    if (q) {
      // The search stops when the person asking goes (its embedding request is closed).
      const found = await whileAsked(reply, (signal) => searchWithRelevance({ search, retrieval }, agent, { text: q, limit: PAGE, kind, visible, signal }));
      if (!found) return reply.hijack();
      injected = found.injected;
      verdicts = injectionNotes(found.results, agent);
      bar = found.bar;
      rows = found.results.map((result) => ({ reflection: result.reflection }));
    } else {
      const superseded = status === 'all' ? undefined : status === 'superseded';
      const page = await reflections.list(agent.id, { limit: PAGE + 1, offset, kind, superseded, scope, user });
      more = page.length > PAGE;
      rows = page.slice(0, PAGE).map((reflection) => ({ reflection }));
    }
    if (source) rows = rows.filter((row) => row.reflection.source === source);
    const replacers = await replacersOf(agent.id, rows.map((row) => row.reflection));
    return reflectionsPage(reply, org, agent, {
      rows,
      q,
      kind,
      source,
      scope,
      // \`user\` is the signed-in person's, for the layout.
      endUser: user,
      visible,
      status,
      replacers,
      offset,
      more,
      injected,
      verdicts,
      barRule: bar === undefined ? undefined : barRule(bar),
    });
  });

  app.post<{ Params: AgentParams; Body: ReflectionForm }>(`${base}/reflections`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const form = request.body ?? {};
    const kind = kindOf(form.kind);
    try {
      if (!kind) throw new EngramError('invalid_request', 'Choose the kind: factual or procedural.');
      const stored = await hand.add(agent.id, {
        content: text(form.content),
        kind,
        topic: text(form.topic) || undefined,
        tags: tagList(form.tags),
        // Blank: it holds everywhere; the agent's own.
        scope: text(form.scope) || null,
        user: text(form.user) || null,
      });
      return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/reflections/${stored.id}`, 303);
    } catch (error) {
      if (!(error instanceof EngramError) || error.status >= 500) throw error;
      const rows = (await reflections.list(agent.id, { limit: PAGE, superseded: false })).map((reflection) => ({ reflection }));
      const message = error.message.replaceAll('`', '"');
      return reflectionsPage(reply, org, agent, { rows, q: '', status: 'current', replacers: {}, offset: 0, more: false, form, error: message }, error.status);
    }
  });

  /** What one reflection's page shows of its history: what replaced it, or what it replaced. */
  const historyOf = async (reflection: Reflection) => {
    if (reflection.supersededBy) return { replacer: (await replacersOf(reflection.agentId, [reflection]))[reflection.supersededBy], replaced: [] };
    const history = await listAllReflections(reflections, reflection.agentId, { superseded: true });
    return { replacer: undefined, replaced: history.filter((r) => r.supersededBy === reflection.id) };
  };

  const reflectionPage = async (reply: FastifyReply, org: Org, agent: Agent, reflection: Reflection, context: Record<string, unknown>, status?: number) =>
    reply.page(
      'agent-reflection',
      { title: `${agent.name}: reflection`, tab: 'reflections', org, agent, reflection, ...TAG_VIEW, ...(await historyOf(reflection)), ...context },
      status,
    );

  app.get<{ Params: ReflectionParams; Querystring: { restored?: string } }>(`${base}/reflections/:id`, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const reflection = await reflections.get(agent.id, request.params.id);
    if (!reflection) throw new EngramError('not_found', 'There is no such reflection (it may have been deleted).');
    const restored = request.query.restored === '1';
    return reflectionPage(reply, org, agent, reflection, { restored });
  });

  app.post<{ Params: ReflectionParams; Body: ReflectionForm }>(`${base}/reflections/:id`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const form = request.body ?? {};
    try {
      await hand.edit(agent.id, request.params.id, {
        content: text(form.content),
        kind: kindOf(form.kind),
        topic: text(form.topic),
        tags: tagList(form.tags),
        // The form shows the scope it has: blank moves it to everywhere.
        ...(form.scope === undefined ? {} : { scope: text(form.scope) || null }),
      });
      return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/reflections/${request.params.id}?saved=1`, 303);
    } catch (error) {
      if (!(error instanceof EngramError) || error.code !== 'invalid_request') throw error;
      const reflection = await reflections.get(agent.id, request.params.id);
      if (!reflection) throw new EngramError('not_found', 'There is no such reflection (it may have been deleted).');
      return reflectionPage(reply, org, agent, reflection, { error: error.message.replaceAll('`', '"') }, 400);
    }
  });

  // Restoring history is a person's edit (`hand.restore`): extraction never supersedes it again.
  app.post<{ Params: ReflectionParams }>(`${base}/reflections/:id/restore`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    await hand.restore(agent.id, request.params.id);
    return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/reflections/${request.params.id}?restored=1`, 303);
  });

  app.post<{ Params: ReflectionParams }>(`${base}/reflections/:id/delete`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    if (!(await hand.remove(agent.id, request.params.id))) throw new EngramError('not_found', 'There is no such reflection (it may have been deleted already).');
    // htmx removes the row in place; a plain form comes back to the list.
    if (request.headers['hx-request']) return reply.send('');
    return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/reflections`, 303);
  });

  app.get<{ Params: AgentParams }>(`${base}/tokens`, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const tokens = await control.directory.listTokens(agent.id);
    return reply.page('agent-tokens', { title: `${agent.name}: tokens`, tab: 'tokens', org, agent, tokens });
  });

  app.post<{ Params: AgentParams; Body: { name?: string } }>(`${base}/tokens`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const name = text(request.body?.name).slice(0, 100) || 'dashboard';
    const { token } = await issueToken(control, agent, name);
    const tokens = await control.directory.listTokens(agent.id);
    return reply.page('agent-tokens', { title: `${agent.name}: tokens`, tab: 'tokens', org, agent, tokens, created: { name, token } }, 201);
  });

  app.post<{ Params: AgentParams & { token: string } }>(`${base}/tokens/:token/revoke`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    if (!(await control.revokeToken(agent.id, request.params.token))) throw new EngramError('not_found', 'There is no such live token.');
    return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/tokens`, 303);
  });

  app.get<{ Params: AgentParams; Querystring: { cursor?: string } }>(`${base}/activity`, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    const cursor = text(request.query.cursor) || undefined;
    const [requestLog, jobs] = await Promise.all([requestLogView(deps, agent.id, cursor), agentJobs(deps.bus, agent.id)]);
    return reply.page('agent-activity', {
      title: `${agent.name}: activity`,
      tab: 'activity',
      org,
      agent,
      kindOf: jobKind,
      ...requestLog,
      ...jobs,
    });
  });

  app.post<{ Params: AgentParams & { id: string } }>(`${base}/activity/dead/:id/retry`, { preValidation: app.csrfProtection }, async (request, reply) => {
    const { org, agent } = await ownAgent(deps, request);
    if (!(await retryAgentDeadLetter(deps.bus, agent.id, request.params.id))) {
      throw new EngramError('not_found', 'There is no such failed job for this agent.');
    }
    return reply.redirect(`/orgs/${org.id}/agents/${agent.id}/activity`, 303);
  });
};

/** What the reflection search says of a result: whether a request saying the query would get it injected, and why (not). */
export interface InjectionNote {
  taken: boolean;
  text: string;
}

/**
 * Each result in words, by reflection id: its relevance against the agent's bar, and
 * whether injection would take it or why not (under the bar, `topK` better ones, the
 * token budget, not among the candidates injection weighs).
 */
export function injectionNotes(results: readonly SearchedReflection[], agent: Agent): Record<string, InjectionNote> {
  const { minScore, topK, tokenBudget } = agent.memory;
  const notes: Record<string, InjectionNote> = {};
  for (const { reflection, relevance, verdict } of results) {
    const measured = relevanceAgainstBar(relevance, minScore);
    const text = verdict?.taken
      ? `${measured}: would be injected, by ${signalOf(verdict.judged)}`
      : relevance < minScore
        ? `${measured}: not injected`
        : verdict === undefined
          ? `${measured}, but not injected: not among the candidates injection weighs for this request`
          : verdict.reason === 'beyond_top_k'
            ? `${measured}, but not injected: this agent takes its best ${topK} and ${topK} rank${topK === 1 ? 's' : ''} higher`
            : `${measured}, but not injected: it would not fit the ${tokenBudget}-token budget beside the better ones`;
    notes[reflection.id] = { taken: verdict?.taken === true, text };
  }
  return notes;
}
