/**
 * The implementations of the conversation machine's steps, given Engram's ports, provided
 * to the machine once per app (`.provide()`); each turn runs as an actor of it
 * (`run-exchange.ts`).
 */
import { fromPromise } from 'xstate';
import {
  conversationMachine,
  type ConversationOutput,
  type Forwarding,
  type Injecting,
  type Publishing,
  type Recording,
  type Relaying,
  type Resolving,
} from '../../machines/conversation.machine.js';
import { newConversationState, pendingTurns, settledState } from '../domain/conversation-state.js';
import { sessionDigestOf } from '../control/conversation-id.js';
import { upstreamUrl } from '../domain/base-urls.js';
import type { Deps } from '../deps.js';
import { EngramError, fromUpstream } from '../errors.js';
import { authenticateAgent } from '../control/auth.js';
import { redactJob, selectNewTurns, type UnredactedJob } from '../memory/extraction.js';
import type { CleanedTurns } from '../memory/cleaned-turns.js';
import { publishJob } from '../memory/watermark.js';
import type { Retrieval } from '../memory/retrieval.js';
import type { ProtocolAdapter } from '../protocols/types.js';
import { MAX_JSON_DEPTH, jsonDeeperThan, tooDeep } from '../protocols/shared.js';
import { renderReflectionsBlock } from '../memory/retrieval.js';
import { INDEX_OPEN, renderIndexBlock, renderReminderBlock } from '../memory/engram-blocks.js';
import { visibleRootIndex } from '../memory/root-index.js';
import type { Visibility } from '../domain/types.js';
import type { Insertion } from '../domain/conversation-state.js';
import { detectMemoryTools, reminderDue, type MemoryTools } from './memory-tools.js';
import { checkKeptBlocks } from './kept-blocks.js';
import { relay } from '../streaming/relay.js';
import type { EngramTurn, ExchangeRequest, Forwarded, Injected, InjectedMemory, Published, Recorded, Relayed, Resolved, Settlement } from './exchange.js';
import { clientHeaders, engramHeaders, upstreamHeaders } from './headers.js';
import { conversationName, findConversation, openingOf, partitionedConversationId, settledConversationId } from './identity.js';
import { headerVisibility, requestVisibility, withScope } from './scope.js';
import { isClientChore } from './chore.js';
import { forwardedBody, newInsertion, planInjection } from './injection.js';
import { cacheResponse, expandRequest, storeResponse, type NewLink } from './chains.js';
import type { RecordingWrite, TurnOf, TurnRecorder } from './recording-retry.js';
import { injectedReflection, nearMiss } from './request-log.js';
import type { InjectedReflection } from '../ports/index.js';
import { instructionFiles } from '../clients/index.js';

/** The conversation machine with Engram's types: placeholder steps until `provideConversationMachine`. */
export const engramConversationMachine = conversationMachine<EngramTurn>();

/** The client's JSON; refused (400) when empty, invalid, or nested too deep for the steps that walk it. */
function parseBody(raw: Buffer): unknown {
  if (raw.length === 0) throw new EngramError('invalid_json', 'The request body is empty; a JSON object is required');
  if (jsonDeeperThan(raw, MAX_JSON_DEPTH)) throw tooDeep();
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new EngramError('invalid_json', `Request body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The index block's tag without its `<`, which JSON encoders may write as `\u003c`. */
const INDEX_TAG = Buffer.from(INDEX_OPEN.slice(1, -1));

export interface ConversationActorDeps extends Deps {
  retrieval: Retrieval;
  /**
   * Turns this process cleaned for extraction, by digest: cleaned after each answer, so a
   * conversation's next job carries its re-sent history cleaned (`selectNewTurns`).
   */
  cleanedTurns: CleanedTurns;
  /** Where a turn's writes go: now, and again later for those the store refused (`RecordingRetry`). */
  recordings: { begin(turn: TurnOf): TurnRecorder };
}

export function provideConversationMachine(deps: ConversationActorDeps) {
  const { control, upstream, bus, config, now } = deps;

  /** The token looked up from the request's headers, when the transport did not (WebSocket frames). */
  const authenticate = fromPromise(async ({ input: { request } }: { input: { request: ExchangeRequest } }) =>
    authenticateAgent(control, request.headers, request.orgId, request.agentId),
  );

  /**
   * Parses the request, expands a chain it continues (Responses' `previous_response_id`)
   * and finds its conversation. The upstream gets the expanded request unless the agent's
   * upstream keeps chains itself and holds the previous response.
   */
  const resolveConversation = fromPromise(async ({ input: { request, authenticated } }: { input: Resolving<EngramTurn> }): Promise<Resolved> => {
    const clientBody = request.body ?? parseBody(request.rawBody);
    const adapter: ProtocolAdapter = request.adapter;
    adapter.validate(clientBody);
    let body = clientBody;
    let forward = { raw: request.rawBody, body: clientBody, offset: 0 };
    let chain: Resolved['chain'];
    // The end user and project the request names: whose Responses records it may continue and keeps.
    const given = headerVisibility(request.headers);
    if (adapter.chain) {
      ({ body, chain } = await expandRequest(control, adapter.chain, clientBody, request.agentId, request.chainCache, given));
      if (chain) {
        const upstreamKeeps = authenticated.agent.upstream.responsesState === 'upstream' && chain.stored;
        forward = upstreamKeeps ? { ...forward, offset: chain.history.length } : { raw: Buffer.from(JSON.stringify(body)), body, offset: 0 };
      }
    }
    const asked = requestVisibility(request.headers, body, given, body === clientBody ? request.rawBody : undefined, deps.clients);
    // One user's conversation is never another's, nor that of a project the request names another's, even where the openings are the same.
    const partition = (id: string) => partitionedConversationId(id, { user: asked.user, scope: given.scope });
    const name = conversationName(adapter, body, request.headers, chain?.conversationId, deps.clients);
    const opening = openingOf(name, partition);
    const found = await findConversation(control.conversations, request.agentId, name, partition);
    const stored = found?.stored ?? null;
    const held = stored?.value ?? newConversationState(request.agentId, found?.id ?? opening, request.adapter.id, now());
    // A turn that states no project keeps the one the conversation had.
    const visible = withScope(asked, asked.scope ?? held.scope);
    const { scope: _scope, user: _user, ...rest } = held;
    const state = { ...rest, ...visible };
    return { body, conversationId: found?.id, opening, state, stored, forward, chain, visible, owner: given, chore: isClientChore(adapter, body, opening, deps.clients) };
  });

  const inject = fromPromise(async ({ input: { request, authenticated, resolved }, signal }: { input: Injecting<EngramTurn>; signal: AbortSignal }): Promise<Injected> => {
    const { agent } = authenticated;
    const { body, state, forward, visible } = resolved;
    const { adapter } = request;
    const messages = adapter.messages(body);
    const plan = planInjection(adapter, messages, state);
    const turn = (state.turns ?? 0) + 1;
    // Memories the new messages already show (a recall result) count as held: never injected beside them, nor later.
    const injectedIds = new Set([...state.injectedIds, ...plan.shown]);
    // Engram's tools as the client offers them: read only when an index or a reminder is at stake.
    let offered: { tools: MemoryTools | undefined } | undefined;
    const memoryTools = () => (offered ??= { tools: detectMemoryTools(adapter.offeredTools(body), config.mcp.serverNames) }).tools;
    // What earlier turns added, re-applied only while it is true.
    const checked = await checkKeptBlocks(plan.kept, {
      agentId: agent.id,
      visible,
      reflections: deps.reflections,
      held: injectedIds,
      rebuildIndex: async (stale) => {
        const tools = memoryTools();
        return tools && { ...stale, ...(await indexBlock(agent.id, visible, tools)) };
      },
    });
    const insertions = checked.insertions.slice();
    for (const id of checked.added) injectedIds.add(id);
    const memory: InjectedMemory = { kept: checked.kept, rebuilt: checked.rebuilt, reason: null, bar: null, nearMisses: [] };
    let reflections: InjectedReflection[] = [];
    const injecting = agent.memory.inject && !resolved.chore;
    if (!injecting) memory.reason = resolved.chore ? 'client_chore' : 'injection_off';
    else if (plan.carrier < 0) memory.reason = 'no_new_input';
    else if (plan.target < 0) memory.reason = 'nothing_to_search';
    else {
      const decision = await deps.retrieval.decide(agent, plan.query, injectedIds, visible, signal);
      const found = decision.taken.map((candidate) => candidate.reflection);
      memory.bar = agent.memory.minScore;
      if (found.length > 0) {
        const ids = found.map((reflection) => reflection.id);
        insertions.push({ ...newInsertion(messages, plan.target, renderReflectionsBlock(found), 'reflections'), reflections: ids, turn });
        for (const id of ids) injectedIds.add(id);
        reflections = decision.taken.map(injectedReflection);
        void deps.reflections.markUsed(agent.id, ids, now()).catch(() => undefined);
      } else {
        memory.reason = decision.reason ?? 'no_candidates';
        memory.nearMisses = decision.nearMisses.map(nearMiss);
      }
    }
    const tools = plan.carrier >= 0 && injecting ? memoryTools() : undefined;
    if (tools) {
      const nudge = await memoryNudge({ adapter, raw: forward.raw, messages, carrier: plan.carrier, insertions, agentId: agent.id, visible, tools });
      if (nudge) insertions.push({ ...nudge, turn });
    }
    const nextState = { ...state, insertions, injectedIds: [...injectedIds], seenMessages: messages.length, turns: turn };
    const forwardBody = forwardedBody(adapter, forward, messages, insertions);
    return { forwardBody, injected: reflections.length, reflections, memory, state: nextState };
  });

  /** The root memory index block a conversation of `visible` gets now, with the reflections it lists. */
  const indexBlock = async (agentId: string, visible: Visibility, tools: MemoryTools): Promise<Pick<Insertion, 'block' | 'reflections'>> => {
    const { markdown, listed } = await visibleRootIndex(deps, agentId, visible);
    return { block: renderIndexBlock(markdown, tools, visible.scope), reflections: listed };
  };

  /**
   * When the client has Engram's MCP tools: the root memory index on the conversation's
   * first turn (re-given if the client dropped it, as a compaction does), later a
   * reminder to use the tools when `reminderDue` says so. Either joins the newest message.
   * A client whose session-start hook already put the index in its context (Engram's hook
   * endpoint) does not get it twice.
   */
  const memoryNudge = async (turn: {
    adapter: ProtocolAdapter;
    raw: Buffer;
    messages: unknown[];
    carrier: number;
    insertions: Insertion[];
    agentId: string;
    visible: Visibility;
    tools: MemoryTools;
  }): Promise<Insertion | undefined> => {
    const { adapter, messages, carrier, insertions, tools } = turn;
    if (!insertions.some((insertion) => insertion.kind === 'index') && !turn.raw.includes(INDEX_TAG)) {
      const { block, reflections } = await indexBlock(turn.agentId, turn.visible, tools);
      return { ...newInsertion(messages, carrier, block, 'index'), reflections };
    }
    const last = (...kinds: string[]) => Math.max(-1, ...insertions.filter((i) => kinds.includes(i.kind ?? '')).map((i) => i.index));
    const due = reminderDue(adapter, messages, carrier, { lastNudge: last('index', 'reminder'), lastReminder: last('reminder') }, config.mcp.serverNames);
    return due && newInsertion(messages, carrier, renderReminderBlock(due, tools), 'reminder');
  };

  const forward = fromPromise(async ({ input: { request, authenticated, resolved, injected }, signal }: { input: Forwarding<EngramTurn>; signal: AbortSignal }): Promise<Forwarded> => {
    const { agent } = authenticated;
    const secrets = await control.agentSecrets(agent.id);
    if (!secrets) throw new EngramError('internal', 'The agent has no upstream credentials');
    const { adapter } = request;
    const response = await upstream
      .send({
        url: upstreamUrl(agent.upstream.baseUrl, adapter.upstreamPath, request.search),
        method: 'POST',
        headers: upstreamHeaders(request.headers, adapter.upstreamAuth(secrets.upstreamApiKey), secrets.upstreamHeaders),
        body: injected.forwardBody,
        signal,
        setBy: agent.upstream.setBy,
        // A streamed answer's headers come at once: one that sends none is hung, and the
        // client hears so after the idle timeout, not the long wait an answer sent whole needs.
        headersTimeoutMs: resolved.body.stream === true ? config.upstreamIdleTimeoutMs : undefined,
      })
      // The log of a failure names the agent and the upstream's host (never the key).
      .catch((error: unknown) => {
        throw fromUpstream(error, { agentId: agent.id, url: agent.upstream.baseUrl });
      });
    return { ok: response.status >= 200 && response.status < 300, ...response };
  });

  const relayStep = fromPromise(async ({ input: { request, authenticated, injected, forwarded }, signal }: { input: Relaying<EngramTurn>; signal: AbortSignal }): Promise<Relayed> => {
    const upstreamResponse = forwarded;
    const headers = { ...clientHeaders(upstreamResponse.headers), ...engramHeaders(injected.injected, request.requestId) };
    const sse = String(upstreamResponse.headers['content-type'] ?? '').includes('text/event-stream');
    request.sink.writeHead(upstreamResponse.status, headers, sse);
    const outcome = await relay({
      body: upstreamResponse.body,
      sink: request.sink,
      adapter: request.adapter,
      sse,
      signal,
      failure: (error) => {
        const { agent } = authenticated;
        return fromUpstream(upstream.failure(error), { agentId: agent.id, url: agent.upstream.baseUrl });
      },
      maxEventBytes: config.sseMaxEventBytes,
      maxAnswerBytes: config.answerMaxBytes,
      maxStreamMs: config.streamMaxMs,
    });
    const final = outcome.outcome === 'completed' && outcome.answer.final && !outcome.answer.errored;
    return { ...outcome, final };
  });

  /**
   * What settling a completed 2xx answer keeps (a failed turn changes nothing): the
   * Responses record, cached at once; after a final answer, the new turns for extraction.
   *
   * The client already has the whole answer: writes the store refuses are not an error of
   * the exchange but kept and retried (`RecordingRetry`). So each write may run again,
   * later, after newer turns of the conversation landed: the response record is the same
   * record again, the job is re-published under its own message id without replacing a
   * newer waiting job, the state is re-applied to the latest one (`settledState`, which
   * undoes nothing a newer turn wrote), the session mark only moves forward.
   */
  const settlementOf = ({ request, authenticated: { agent }, resolved, injected, relayed }: Publishing<EngramTurn>): Settlement => {
    const { body, chain } = resolved;
    const settledAt = now();
    const { adapter } = request;
    const answered = relayed.outcome === 'completed' ? relayed.answer.response : undefined;
    const id = settledConversationId(resolved.conversationId, resolved.opening, relayed.outcome === 'completed' ? relayed.answer.turns : undefined);
    let link: NewLink | undefined;
    if (adapter.chain && answered) {
      link = {
        agentId: agent.id,
        owner: resolved.owner,
        // An answer with no assistant turn names nothing: its chain keeps to the opening.
        conversationId: id ?? resolved.opening,
        response: answered,
        input: adapter.messages(body).slice(chain?.history.length ?? 0),
        chain,
        store: adapter.chain.stored(body),
        now: settledAt,
      };
      // In memory, at once: the connection's next request may continue it whatever the store says.
      cacheResponse(link, request.chainCache);
    }
    const turn = injected.state;
    let compacted = false;
    let job: UnredactedJob | undefined;
    if (id !== undefined && relayed.outcome === 'completed' && relayed.final && agent.memory.extract && !resolved.chore) {
      const turns = [...adapter.transcript(body, instructionFiles(deps.clients)), ...relayed.answer.turns];
      // The watermark as the request found it. A job that moved it since only makes this one
      // cover turns already done, which the consumer skips (it reads the watermark again).
      const pending = pendingTurns(turn, turns.length);
      compacted = pending.restarted;
      job = selectNewTurns({
        agentId: agent.id,
        orgId: agent.orgId,
        conversationId: id,
        protocol: adapter.id,
        model: adapter.model(body),
        turns,
        watermark: pending.from,
        maxBytes: config.extraction.maxBytes,
        settledAt,
        cleaned: deps.cleanedTurns,
        instructions: adapter.instructions(body, instructionFiles(deps.clients)),
        ...resolved.visible,
      });
    }
    const response = link?.store ? link : undefined;
    const recorder = deps.recordings.begin({
      agentId: agent.id,
      conversationId: id ?? resolved.opening,
      bytes: () => jsonBytes(response) + jsonBytes(job) + jsonBytes(turn),
    });
    return { settledAt, conversationId: id, response, job, compacted, recorder };
  };

  /**
   * Publishes a final answer's new turns for extraction, once the conversation has been
   * quiet for `settleMs`. It goes before the state write (the `recording` state), which
   * supersedes any older job of the conversation still waiting: a crash in between leaves
   * a job that still runs.
   */
  const publish = fromPromise(async ({ input }: { input: Publishing<EngramTurn> }): Promise<Published> => {
    const settlement = settlementOf(input);
    const { job } = settlement;
    if (!job) return { job: 'none', settlement };
    const written = await settlement.recorder.write([
      { name: 'job', run: (retry) => publishJob(bus, job, config.settleMs, { supersede: !retry }) },
    ]);
    return { job: written === 'written' ? 'published' : written === 'kept' ? 'deferred' : 'lost', settlement };
  });

  /**
   * Records the turn: what the next turn needs (the blocks added, what was seen, the
   * watermark), written against the revision the request read; the Responses record; the
   * session mark. Behind a publish the bus refused, these wait in the retry queue.
   */
  const record = fromPromise(async ({ input }: { input: Recording<EngramTurn> }): Promise<Recorded> => {
    const { authenticated: { agent }, resolved: { stored }, injected: { state: found }, published } = input;
    // Settled when it was published (a final answer), else here (a tool call: nothing to learn from yet).
    const { settledAt, conversationId: id, compacted, job, response: kept, recorder } = published?.settlement ?? settlementOf(input);
    const queued = job !== undefined;
    const response: RecordingWrite | undefined = kept && { name: 'response', run: () => storeResponse(control, kept) };
    // A turn that opened its conversation names it now (its answer is known).
    const turn = id === undefined ? found : { ...found, id };
    const state: RecordingWrite | undefined = id === undefined ? undefined : {
      name: 'state',
      // A retry reads the state afresh: what the request read is stale by then.
      run: (retry) => control.updateConversation(agent.id, id, (current) => settledState(current, turn, { settledAt, compacted, queued }), retry ? undefined : stored),
    };
    const session = id === undefined ? undefined : sessionDigestOf(id);
    // Marked when the conversation opens, and again after a day of silence so the mark
    // outlives the pruning of idle sessions as long as the conversation itself does.
    const mark: RecordingWrite | undefined =
      session && (!stored || settledAt - stored.value.lastActivityAt > SESSION_MARK_REFRESH_MS)
        ? { name: 'session', run: () => control.conversations.markSession(agent.id, session, settledAt) }
        : undefined;
    // Together: one round trip on a networked store, not three.
    const written = await recorder.write([response, state, mark].filter((write): write is RecordingWrite => write !== undefined));
    return { state: written === 'written' ? ('recorded' as const) : written === 'kept' ? ('deferred' as const) : ('lost' as const), conversationId: id };
  });

  return {
    /** The machine with Engram's steps: `createActor` it once per turn (`runExchange`). */
    machine: engramConversationMachine.provide({
      actors: { authenticate, resolveConversation, inject, forward, relay: relayStep, publish, record },
    }),
    /** Where `runExchange` records each turn once it ended (DESIGN section 12). */
    requestLog: control.requests,
    now,
    /**
     * Once the client has its whole answer: the turns the turn published unredacted are
     * cleaned in the background, so the conversation's next job carries them cleaned (the
     * worker would clean them anyway; this spares re-sealing them raw every turn).
     */
    afterAnswer(output: ConversationOutput<EngramTurn>): void {
      const job = output.published?.settlement.job;
      if (!job) return;
      setImmediate(() => {
        try {
          redactJob(job, deps.cleanedTurns);
        } catch {
          // The worker cleans the job itself.
        }
      });
    },
  };
}

/** The conversation machine given Engram's steps. */
export type ConversationFlow = ReturnType<typeof provideConversationMachine>;

const SESSION_MARK_REFRESH_MS = 24 * 60 * 60 * 1000;

/** What keeping `value` in memory costs, about: its JSON's length. */
function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}

