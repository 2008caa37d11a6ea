/**
 * The multi-turn agent workload (issue 12): conversations that grow turn by turn, as an
 * agent's do, sent direct, through the bare proxy, through the Portkey gateway (issue 22,
 * when it is installed) and through Engram. Chat completions,
 * not streamed: a 4 KB system prompt and a first user message that names the
 * conversation (Engram tells conversations apart by system prompt and first user
 * message, src/conversation/identity.ts), then at every turn the whole history again with
 * the previous assistant answer and a new user message appended.
 *
 * The assistant answer appended is scripted (about 2 KB of explanation and code), not the
 * upstream's echo: the echo through Engram would quote the memory Engram inserted, and
 * every target must send the same conversation shapes.
 *
 * A separate Engram child holds 1,000 reflections and extracts with a 300 ms settle, so
 * extraction runs during the phase (a conversation's turns come faster than that; its
 * extraction starts 300 ms after its last turn, while the next conversations run). In
 * the sequential parts the load moves to the next target only once Engram's extraction
 * queue is empty, so extraction is charged to Engram's block, not to the references'.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngramHello } from './engram-process.js';
import { startChild, type Child } from './ipc.js';
import { client, directTarget, engramTarget, type Client, type ClosedLoop, type Sent, type Target } from './load.js';
import { capacityVsBare, capacityVsGateway, type CapacityVsBare, type CapacityVsGateway, type VsBare, type VsGateway } from './phases.js';
import { ratioTo, summarise, type Summary } from './stats.js';
import type { ByteTally, UpstreamHello } from './upstream-process.js';
import { AGENT_SYSTEM, ANSWER, CODE_LINE, questions, SYSTEM_BYTES } from './workload.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

type Message = Record<string, unknown>;

const LOG_LINE = '2026-11-23T12:00:01Z WARN pool exhausted after 30000 ms; 12 requests waiting (db=primary)\n';

/** About 700 bytes: a follow-up with the output the user pasted. */
const FOLLOW_UP = (ask: string) => `${ask} Here is what I see now:\n${LOG_LINE.repeat(7)}`;
const ASKS = questions(997, 12);

/** A chat-completions body that grows by appending messages, each serialised once. */
interface Growing {
  append(...messages: Message[]): void;
  body(): Buffer;
}

function growing(opening: Message[], historyJson = ''): Growing {
  let json = `{"model":"gpt-4o-mini","stream":false,"messages":[${opening.map((m) => JSON.stringify(m)).join(',')}${historyJson}`;
  return {
    append: (...messages) => {
      for (const m of messages) json += ',' + JSON.stringify(m);
    },
    body: () => Buffer.from(json + ']}'),
  };
}

/** How a conversation opens and grows; `id` makes its opening, so its identity, distinct. */
interface Shape {
  turns: number;
  open(id: number): Growing;
}

export function agentShape(turns: number, historyJson = ''): Shape {
  return {
    turns,
    open: (id) => {
      const first = `Conversation ${id}: ${ASKS[id % ASKS.length]}`;
      return growing([{ role: 'system', content: AGENT_SYSTEM }, { role: 'user', content: first }], historyJson);
    },
  };
}

/** About `bytes` of earlier tool-using turns (read_file calls and their 40-line results), as JSON to splice after the opening. */
export function toolHistory(bytes: number): string {
  let json = '';
  for (let i = 0; json.length < bytes; i++) {
    const call = { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module-${i}.ts` }) } }] };
    json += ',' + JSON.stringify(call) + ',' + JSON.stringify({ role: 'tool', tool_call_id: `call_${i}`, content: CODE_LINE.repeat(40) });
  }
  return json;
}

interface Sample extends Sent {
  turn: number;
  bytes: number;
}

/** One conversation, turn by turn; stops early at `deadline` or at the first failure under load. */
export async function converse(c: Client, shape: Shape, id: number, deadline = Infinity): Promise<{ samples: Sample[]; error?: string }> {
  const conversation = shape.open(id);
  const samples: Sample[] = [];
  for (let turn = 1; turn <= shape.turns && performance.now() < deadline; turn++) {
    if (turn > 1) conversation.append({ role: 'assistant', content: ANSWER(turn - 1) }, { role: 'user', content: FOLLOW_UP(ASKS[(id + turn) % ASKS.length]) });
    const body = conversation.body();
    const started = performance.now();
    try {
      const sent = await c.send('chat', body);
      samples.push({ ...sent, turn, bytes: body.length });
      if (sent.status !== 200) return { samples, error: `HTTP ${sent.status}` };
    } catch (error) {
      samples.push({ ms: performance.now() - started, status: 0, injected: -1, turn, bytes: body.length });
      return { samples, error: String(error) };
    }
  }
  return { samples };
}

/** Engram's added time per request in a sequential part, beside the bare proxy's and the gateway's. */
export interface TurnLatency {
  conversations: number;
  turnsPerConversation: number;
  /** Body sizes of the turns measured: the smallest and the largest. */
  bodyBytes: { min: number; max: number };
  direct: Summary;
  bare: Summary;
  engram: Summary;
  addedP50: number;
  addedP99: number;
  bareAddedP50: number;
  bareAddedP99: number;
  vsBare: VsBare;
  /** The Portkey gateway, when it ran: its times, what it added, Engram's added time over it. */
  gateway?: Summary;
  gatewayAddedP50?: number;
  gatewayAddedP99?: number;
  vsGateway?: VsGateway;
  /** p50 of each turn (index 0 is turn 1), per target (the gateway's when it ran). */
  p50ByTurn: Partial<Record<Target['name'], number[]>>;
  errors: number;
  injectedShare: number;
}

function turnLatency(results: Record<Target['name'], Sample[]>, conversations: number, turns: number): TurnLatency {
  const ok = (s: Sample) => s.status === 200;
  const of = (name: Target['name']) => summarise(results[name].filter(ok).map((s) => s.ms));
  const [d, b, e] = [of('direct'), of('bare'), of('engram')];
  const all = Object.values(results).flat();
  const byTurn = (name: Target['name']) =>
    [...new Set(results[name].map((s) => s.turn))].sort((x, y) => x - y).map((turn) => summarise(results[name].filter((s) => ok(s) && s.turn === turn).map((s) => s.ms)).p50);
  const added = { p50: e.p50 - d.p50, p99: e.p99 - d.p99, bareP50: b.p50 - d.p50, bareP99: b.p99 - d.p99 };
  const gateway = results.gateway.length > 0 ? of('gateway') : undefined;
  const versusGateway = gateway && {
    gateway,
    gatewayAddedP50: gateway.p50 - d.p50,
    gatewayAddedP99: gateway.p99 - d.p99,
    vsGateway: { addedP50Ratio: ratioTo(added.p50, gateway.p50 - d.p50), addedP99Ratio: ratioTo(added.p99, gateway.p99 - d.p99) },
  };
  return {
    conversations,
    turnsPerConversation: turns,
    bodyBytes: { min: Math.min(...all.map((s) => s.bytes)), max: Math.max(...all.map((s) => s.bytes)) },
    direct: d,
    bare: b,
    engram: e,
    addedP50: added.p50,
    addedP99: added.p99,
    bareAddedP50: added.bareP50,
    bareAddedP99: added.bareP99,
    vsBare: { addedP50Ratio: ratioTo(added.p50, added.bareP50), addedP99Ratio: ratioTo(added.p99, added.bareP99) },
    ...versusGateway,
    p50ByTurn: { direct: byTurn('direct'), bare: byTurn('bare'), ...(gateway ? { gateway: byTurn('gateway') } : {}), engram: byTurn('engram') },
    errors: all.filter((s) => !ok(s)).length,
    injectedShare: results.engram.filter((s) => s.injected > 0).length / Math.max(1, results.engram.length),
  };
}

interface Phase {
  clients: Client[];
  /** Waits until Engram's extraction queue is empty (its settle time passed first). */
  drain(): Promise<void>;
}

/**
 * `conversations` per target, one after the other, in blocks of `block` conversations per
 * target, alternating the order of the targets from block to block (as `interleaved` does
 * request by request); Engram's extraction queue is emptied after each of its blocks.
 */
async function sequential(phase: Phase, shape: Shape, options: { conversations: number; block: number; firstId: number }): Promise<Record<Target['name'], Sample[]>> {
  const results: Record<Target['name'], Sample[]> = { direct: [], bare: [], gateway: [], engram: [] };
  let id = options.firstId;
  for (let done = 0, round = 0; done < options.conversations; round++) {
    const size = Math.min(options.block, options.conversations - done);
    for (const c of round % 2 === 0 ? phase.clients : [...phase.clients].reverse()) {
      for (let i = 0; i < size; i++) {
        const { samples, error } = await converse(c, shape, id++);
        if (error) throw new Error(`multi-turn: ${c.target.name} failed: ${error}`);
        results[c.target.name].push(...samples);
      }
      if (c.target.name === 'engram') await phase.drain();
    }
    done += size;
  }
  return results;
}

export interface ConversationLoad extends ClosedLoop {
  virtualUsers: number;
  conversations: number;
}

/** `users` virtual users, each running conversations back to back until `durationMs` is up. */
export async function virtualUsers(c: Client, shape: Shape, users: number, durationMs: number, firstId: number): Promise<ConversationLoad> {
  const times: number[] = [];
  let requests = 0;
  let errors = 0;
  let injected = 0;
  let conversations = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + durationMs;
  const user = async (u: number) => {
    for (let k = 0; performance.now() < deadline; k++) {
      const { samples, error } = await converse(c, shape, firstId + u * 100_000 + k, deadline);
      conversations++;
      for (const s of samples) {
        times.push(s.ms);
        requests++;
        if (s.status !== 200) errors++;
        else if (s.injected > 0) injected++;
      }
      // A failed request (counted above, status 0 when it threw) ends its conversation.
      if (error) firstError ??= error;
    }
  };
  await Promise.all(Array.from({ length: users }, (_, u) => user(u)));
  const seconds = (performance.now() - started) / 1000;
  return {
    virtualUsers: users,
    conversations,
    requests,
    errors,
    seconds,
    rps: (requests - errors) / seconds,
    injectedShare: injected / Math.max(1, requests),
    latency: summarise(times),
    firstError,
  };
}

export interface MultiTurnResult {
  systemPromptBytes: number;
  turnsPerConversation: number;
  reflections: number;
  settleMs: number;
  /** (a) One virtual user: every request's time, direct, bare and Engram. */
  sequential: TurnLatency;
  /** A conversation whose history starts near 400 KB, continued turn by turn; turn 1 (the opening) is reported apart. */
  continued400k: TurnLatency & { opening: { engramAddedP50: number; bareAddedP50: number; gatewayAddedP50?: number } };
  /** (b) 50 virtual users at once. */
  concurrent: {
    direct: ConversationLoad;
    bare: ConversationLoad;
    engram: ConversationLoad;
    vsBare: CapacityVsBare;
    /** The Portkey gateway under the same load, when it ran. */
    gateway?: ConversationLoad;
    vsGateway?: CapacityVsGateway;
    /** Extraction jobs still queued when direct's measure began (the warm-up's, left after the drain timed out; 0 expected). */
    extractionPendingBefore: number;
    /** Extraction calls the upstream received while Engram was measured, and the jobs still queued at its end. */
    extractionRequests: number;
    extractionPendingAfter: number;
  };
  extraction: { requests: number; deadLetters: number };
}

export interface MultiTurnOptions {
  reflections: number;
  settleMs: number;
  sequentialConversations: number;
  continuedConversations: number;
  continuedTurns: number;
  users: number;
  warmupMs: number;
  durationMs: number;
  drainTimeoutMs: number;
}

const TURNS = 6;

/** `gateway`: the Portkey gateway reference, measured beside the bare proxy when given. */
export async function multiTurn(upstream: Child<UpstreamHello>, bare: Target, gateway: Target | undefined, options: MultiTurnOptions): Promise<MultiTurnResult> {
  const engramChild = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
    env: { BENCH_UPSTREAM_URL: upstream.hello.url, BENCH_REFLECTIONS: String(options.reflections), BENCH_SETTLE_MS: String(options.settleMs) },
  });
  const engram = engramTarget(engramChild.hello);
  const direct = directTarget(upstream.hello);
  const queue = () => engramChild.call<{ pending: number; deadLetters: number }>('extractionQueue');
  const extractionCalls = async () => (await upstream.call<ByteTally>('bytes')).extractionRequests;
  const drain = async () => {
    await new Promise((resolve) => setTimeout(resolve, options.settleMs + 50));
    const deadline = Date.now() + options.drainTimeoutMs;
    while ((await queue()).pending > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  };
  const targets = [direct, bare, ...(gateway ? [gateway] : []), engram];
  const one = targets.map((t) => client(t, 1));
  const many = targets.map((t) => client(t, options.users));
  try {
    await upstream.call('reset');
    await upstream.call('resetBytes', {});
    const phase: Phase = { clients: one, drain };
    const shape = agentShape(TURNS);
    await sequential(phase, shape, { conversations: Math.max(1, Math.round(options.sequentialConversations / 10)), block: 5, firstId: 1_000_000 });
    // Blocks of 25 conversations (about a second through Engram): the extraction of a
    // block's first conversations runs while its later ones are measured.
    const seq = await sequential(phase, shape, { conversations: options.sequentialConversations, block: 25, firstId: 2_000_000 });

    const long = agentShape(options.continuedTurns, toolHistory(400 * 1024));
    await sequential(phase, long, { conversations: 1, block: 1, firstId: 3_000_000 });
    const continued = await sequential(phase, long, { conversations: options.continuedConversations, block: 3, firstId: 3_100_000 });
    const later = (samples: Sample[]) => samples.filter((s) => s.turn > 1);
    const each = (pick: (samples: Sample[]) => Sample[]) =>
      Object.fromEntries(Object.entries(continued).map(([name, samples]) => [name, pick(samples)])) as Record<Target['name'], Sample[]>;
    const opening = turnLatency(
      each((samples) => samples.filter((s) => s.turn === 1)),
      options.continuedConversations,
      1,
    );
    const continuedResult = {
      ...turnLatency(each(later), options.continuedConversations, options.continuedTurns),
      opening: { engramAddedP50: opening.addedP50, bareAddedP50: opening.bareAddedP50, ...(gateway ? { gatewayAddedP50: opening.gatewayAddedP50 } : {}) },
    };

    // Warm-ups first, Engram's extraction drained, then direct, bare, the gateway and Engram measured in turn.
    const [d, b] = many;
    const g = gateway ? many[2] : undefined;
    const e = many.at(-1)!;
    await virtualUsers(e, shape, options.users, options.warmupMs, 4_000_000);
    await drain();
    await virtualUsers(b, shape, options.users, options.warmupMs / 2, 4_000_000);
    if (g) await virtualUsers(g, shape, options.users, options.warmupMs / 2, 4_000_000);
    await virtualUsers(d, shape, options.users, options.warmupMs / 2, 4_000_000);
    const pendingBefore = (await queue()).pending;
    const loadDirect = await virtualUsers(d, shape, options.users, options.durationMs, 20_000_000);
    const loadBare = await virtualUsers(b, shape, options.users, options.durationMs, 30_000_000);
    const loadGateway = g && (await virtualUsers(g, shape, options.users, options.durationMs, 50_000_000));
    const callsBefore = await extractionCalls();
    const loadEngram = await virtualUsers(e, shape, options.users, options.durationMs, 40_000_000);
    const callsDuring = (await extractionCalls()) - callsBefore;
    const pendingAfter = (await queue()).pending;
    const { deadLetters } = await queue();
    return {
      systemPromptBytes: SYSTEM_BYTES,
      turnsPerConversation: TURNS,
      reflections: engramChild.hello.reflections,
      settleMs: options.settleMs,
      sequential: turnLatency(seq, options.sequentialConversations, TURNS),
      continued400k: continuedResult,
      concurrent: {
        direct: loadDirect,
        bare: loadBare,
        engram: loadEngram,
        vsBare: capacityVsBare(loadDirect, loadBare, loadEngram),
        ...(loadGateway ? { gateway: loadGateway, vsGateway: capacityVsGateway(loadDirect, loadGateway, loadEngram) } : {}),
        extractionPendingBefore: pendingBefore,
        extractionRequests: callsDuring,
        extractionPendingAfter: pendingAfter,
      },
      extraction: { requests: await extractionCalls(), deadLetters },
    };
  } finally {
    await Promise.all([...one, ...many].map((c) => c.close()));
    await upstream.call('resetBytes', {});
    await upstream.call('reset');
    await engramChild.stop();
  }
}
