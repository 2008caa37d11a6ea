/** The bench's one table, and the JSON file beside it. */
import fs from 'node:fs';
import path from 'node:path';
import type { CapacityResult, CapacityVsGateway, LatencyResult, RetrievalResult, StreamsResult } from './phases.js';
import type { ExtractionCostResult } from './extraction-cost.js';
import type { McpRecallResult } from './mcp-recall.js';
import type { RedactionBenchResult } from './redaction.js';
import type { ActorCostResult } from './actor-cost.js';
import type { ProfileSummary } from './profile.js';
import type { ResponsesResults } from './responses.js';
import type { TranscriptBenchResult } from './transcripts.js';
import type { MultiTurnResult, TurnLatency } from './multi-turn.js';
import { round, signedMs } from './stats.js';
import type { BareVerdicts } from './versus-bare.js';
import type { GatewayTarget } from './versus-gateway.js';

export interface Results {
  startedAt: string;
  revision?: { commit: string; dirty: boolean };
  machine: { cpus: number; node: string; platform: string };
  /** The Portkey gateway reference, when it ran: its version and what was sent through it. */
  gateway?: { package: string; version: string; requests: string };
  reflections: number;
  latency4k: LatencyResult;
  latency400k: LatencyResult;
  capacity: CapacityResult;
  firstByte: LatencyResult & { incomplete: number };
  streams: StreamsResult;
  retrieval: RetrievalResult;
  /** `/v1/responses` over HTTP and WebSocket. */
  responses?: ResponsesResults;
  /** `recall` over the MCP server (Streamable HTTP), timed on the client. */
  mcp?: { recall_10k: McpRecallResult };
  /** Transcript uploads to the hook endpoint. */
  transcripts?: TranscriptBenchResult;
  /** Bytes extraction sends upstream against the bytes of the conversation it learns from. */
  extractionCost?: ExtractionCostResult;
  /** `redactSecrets` on 48 KB of agent text, in process, now and at the revision before the ruleset. */
  redaction?: RedactionBenchResult;
  actor?: ActorCostResult;
  /** The same 4 KB and capacity phases with the bus and control stores on NATS. */
  nats?: { server: string; latency4k: LatencyResult; capacity: CapacityResult };
  /** Conversations growing turn by turn, 1 and 50 virtual users, and a 400 KB one continued (issue 12). */
  multiTurn?: MultiTurnResult;
  /** Issue 12's targets against the bare proxy, or why no verdict is given. */
  bareVerdicts?: BareVerdicts;
  /** Issue 22's targets against the Portkey gateway (reported, never enforced). */
  gatewayTargets?: GatewayTarget[];
  durationSeconds: number;
  /** With `--profile`: where Engram's CPU went under load. */
  profiles?: Record<string, ProfileSummary & { requests: number }>;
}

/**
 * `bare` and `vsBare`: the bare proxy reference's figure, and Engram's as a multiple of it (issue 12);
 * `gateway` and `vsGateway`: the same for the Portkey gateway (issue 22).
 */
type Row = [
  measure: string,
  direct: string,
  engram: string,
  figure: string,
  target: string,
  verdict: string,
  bare?: string,
  vsBare?: string,
  gateway?: string,
  vsGateway?: string,
];

const ms = (x: number) => `${round(x, 2)} ms`;
const mb = (bytes: number) => `${round(bytes / 2 ** 20, 0)} MB`;
const pct = (x: number) => `${round(x * 100, 1)}%`;
const verdict = (ok: boolean) => (ok ? 'pass' : 'MISS');
const times = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${round(x, 2)}x`);

type Ratios = { addedP50Ratio: number | null; addedP99Ratio: number | null };

/** The references' cells of a latency row, each its percentile and Engram's added time over the reference's. */
function bareCells(
  x: Pick<LatencyResult, 'bare' | 'bareAddedP50' | 'bareAddedP99' | 'vsBare' | 'gateway' | 'gatewayAddedP50' | 'gatewayAddedP99' | 'vsGateway'>,
  p: 'p50' | 'p99',
): [bare: string, vsBare: string, gateway: string, vsGateway: string] {
  const cells = (name: string, summary?: { p50: number; p99: number }, added50?: number, added99?: number, ratios?: Ratios): [string, string] =>
    summary && ratios
      ? [ms(summary[p]), `added ${times(p === 'p50' ? ratios.addedP50Ratio : ratios.addedP99Ratio)} (${name} ${signedMs(p === 'p50' ? added50! : added99!)})`]
      : ['-', '-'];
  return [...cells('bare', x.bare, x.bareAddedP50, x.bareAddedP99, x.vsBare), ...cells('gateway', x.gateway, x.gatewayAddedP50, x.gatewayAddedP99, x.vsGateway)];
}

/** The references' cells of a capacity row: each one's req/s, Engram's req/s and added p99 (p50 too for the gateway) over its. */
function bareLoadCells(c: {
  bare?: { rps: number };
  vsBare?: { rpsRatio: number | null; addedP99Ratio: number | null; bareAddedP99: number };
  gateway?: { rps: number };
  vsGateway?: CapacityVsGateway;
}): [bare: string, vsBare: string, gateway: string, vsGateway: string] {
  const bare: [string, string] =
    c.bare && c.vsBare ? [`${round(c.bare.rps, 0)}`, `req/s ${times(c.vsBare.rpsRatio)}; added p99 ${times(c.vsBare.addedP99Ratio)} (bare ${signedMs(c.vsBare.bareAddedP99)})`] : ['-', '-'];
  const g = c.vsGateway;
  const gateway: [string, string] =
    c.gateway && g
      ? [
          `${round(c.gateway.rps, 0)}`,
          `req/s ${times(g.rpsRatio)}; added p50 ${times(g.addedP50Ratio)} (gateway ${signedMs(g.gatewayAddedP50)}), p99 ${times(g.addedP99Ratio)} (gateway ${signedMs(g.gatewayAddedP99)})`,
        ]
      : ['-', '-'];
  return [...bare, ...gateway];
}

export function rows(r: Results): Row[] {
  const { latency4k: a, latency400k: b, capacity: c, firstByte: t, streams: s, retrieval: q } = r;
  const kb = (bytes: number) => `${round(bytes / 1024, 0)} KB`;
  return [
    [`${kb(a.bodyBytes)} ${a.protocol}, p50 (n=${a.engram.n})`, ms(a.direct.p50), ms(a.engram.p50), `+${ms(a.addedP50)}`, '<= 1 ms', verdict(a.addedP50 <= 1 && a.errors === 0), ...bareCells(a, 'p50')],
    [`${kb(a.bodyBytes)} ${a.protocol}, p99`, ms(a.direct.p99), ms(a.engram.p99), `+${ms(a.addedP99)}`, '<= 5 ms', verdict(a.addedP99 <= 5 && a.errors === 0), ...bareCells(a, 'p99')],
    [`${kb(b.bodyBytes)} ${b.protocol}, p50 (n=${b.engram.n})`, ms(b.direct.p50), ms(b.engram.p50), `+${ms(b.addedP50)}`, '<= 8 ms', verdict(b.addedP50 <= 8 && b.errors === 0), ...bareCells(b, 'p50')],
    [`${kb(b.bodyBytes)} ${b.protocol}, p99`, ms(b.direct.p99), ms(b.engram.p99), `+${ms(b.addedP99)}`, '-', '-', ...bareCells(b, 'p99')],
    [
      `req/s at ${c.concurrency} concurrent, ${round(c.engram.seconds, 1)} s`,
      `${round(c.direct.rps, 0)}`,
      `${round(c.engram.rps, 0)}`,
      `errors ${c.engram.errors} (direct ${c.direct.errors}); p99 ${ms(c.engram.latency.p99)} (direct ${ms(c.direct.latency.p99)})`,
      '>= 2,500, 0 errors',
      verdict(c.engram.rps >= 2500 && c.engram.errors === 0),
      ...bareLoadCells(c),
    ],
    [`stream TTFB ${t.protocol}, p50 (n=${t.engram.n})`, ms(t.direct.p50), ms(t.engram.p50), `+${ms(t.addedP50)}`, '<= 2 ms', verdict(t.addedP50 <= 2 && t.errors + t.incomplete === 0), ...bareCells(t, 'p50')],
    [
      `${s.streams} streams held (~${round(s.eachStreamMs / 1000, 1)} s each)`,
      '-',
      `${s.completed} ok`,
      `errors ${s.errors}; upstream conns peak ${s.upstreamPeakConnections}; TTFB p50 ${ms(s.ttfb.p50)}, max ${ms(s.ttfb.max)}; wall ${round(s.wallMs / 1000, 1)} s`,
      '0 errors, all open at once',
      // Queued behind a connection cap is not "held": the upstream must see every stream open.
      verdict(s.errors === 0 && s.completed === s.streams && (s.upstreamPeakConnections < 0 || s.upstreamPeakConnections >= s.streams)),
    ],
    ['Engram RSS during streams', '-', mb(s.rssPeak), `before ${mb(s.rssBefore)}, peak ${mb(s.rssPeak)}, after ${mb(s.rssAfter)}`, 'reported', '-'],
    [`retrieval, ${q.stored} reflections, p50 (n=${q.n})`, '-', ms(q.p50), `max ${ms(q.max)}, cold ${ms(q.coldMs)}`, '-', '-'],
    [`retrieval, ${q.stored} reflections, p95`, '-', ms(q.p95), `hits ${pct(q.hitShare)}`, '<= 10 ms', verdict(q.p95 <= 10)],
    [
      'requests with x-engram-injected > 0',
      '-',
      pct(a.injectedShare),
      `4 KB ${pct(a.injectedShare)}, 400 KB ${pct(b.injectedShare)}, capacity ${pct(c.engram.injectedShare)}, stream ${pct(t.injectedShare)}`,
      '> 0',
      verdict(Math.min(a.injectedShare, b.injectedShare, c.engram.injectedShare, t.injectedShare) > 0),
    ],
    ...(r.responses ? responsesRows(r.responses) : []),
    ...(r.mcp ? mcpRows(r.mcp.recall_10k) : []),
    ...(r.transcripts ? transcriptRows(r.transcripts) : []),
    ...(r.extractionCost ? extractionCostRows(r.extractionCost) : []),
    ...(r.nats ? natsRows(r.nats, a, c) : []),
    ...(r.redaction ? redactionRows(r.redaction) : []),
    ...(r.actor ? [actorRow(r.actor)] : []),
    ...(r.multiTurn ? multiTurnRows(r.multiTurn) : []),
    ...(r.bareVerdicts ? bareVerdictRows(r.bareVerdicts) : []),
    ...(r.gatewayTargets ?? []).map((t): Row => [`issue 22: ${t.measure}`, '-', '-', t.figure, t.target, t.result]),
  ];
}

/** Conversations growing turn by turn (bench/multi-turn.ts), beside the bare proxy. */
function multiTurnRows(m: MultiTurnResult): Row[] {
  const kb = (bytes: number) => `${round(bytes / 1024, 1)} KB`;
  const { sequential: s, concurrent: c, continued400k: x } = m;
  const row = (measure: string, x: TurnLatency, p: 'p50' | 'p99', detail = ''): Row => {
    const added = p === 'p50' ? x.addedP50 : x.addedP99;
    return [measure, ms(x.direct[p]), ms(x.engram[p]), `+${ms(added)}${detail}`, 'issues 12, 22 (below)', '-', ...bareCells(x, p)];
  };
  const users = c.engram.virtualUsers;
  return [
    row(
      `multi-turn, 1 user, ${s.turnsPerConversation} turns (${kb(s.bodyBytes.min)}-${kb(s.bodyBytes.max)}), p50 (n=${s.engram.n})`,
      s,
      'p50',
      `; injected ${pct(s.injectedShare)}; errors ${s.errors}`,
    ),
    row(`multi-turn, 1 user, p99`, s, 'p99'),
    [
      `multi-turn, ${users} users, req/s (${round(c.engram.seconds, 1)} s, ${c.engram.conversations} conversations)`,
      `${round(c.direct.rps, 0)}`,
      `${round(c.engram.rps, 0)}`,
      `p50 ${ms(c.engram.latency.p50)}, p99 ${ms(c.engram.latency.p99)} (direct ${ms(c.direct.latency.p50)}, ${ms(c.direct.latency.p99)}; ` +
        `bare ${ms(c.bare.latency.p50)}, ${ms(c.bare.latency.p99)}${c.gateway ? `; gateway ${ms(c.gateway.latency.p50)}, ${ms(c.gateway.latency.p99)}` : ''}); errors ${c.engram.errors}; ` +
        `extraction calls ${c.extractionRequests}, queued after ${c.extractionPendingAfter}`,
      'issues 12, 22 (below)',
      '-',
      ...bareLoadCells(c),
    ],
    row(
      `${kb(x.bodyBytes.min)} conversation continued, ${x.turnsPerConversation - 1} more turns, p50 (n=${x.engram.n})`,
      x,
      'p50',
      `; opening turn ${signedMs(x.opening.engramAddedP50)} (bare ${signedMs(x.opening.bareAddedP50)}` +
        `${x.opening.gatewayAddedP50 === undefined ? '' : `, gateway ${signedMs(x.opening.gatewayAddedP50)}`}); errors ${x.errors}`,
    ),
    row(`${kb(x.bodyBytes.min)} conversation continued, p99`, x, 'p99'),
  ];
}

/** Issue 12's targets against the bare proxy; `no verdict (why)` on a quick run or a small host. */
function bareVerdictRows(v: BareVerdicts): Row[] {
  return v.targets.map((t): Row => [`issue 12: ${t.measure}`, '-', '-', t.figure, t.target, t.result]);
}

/** Redaction runs on every extraction input: its cost on 48 KB, before the ruleset and now. */
function redactionRows(x: RedactionBenchResult): Row[] {
  const kb = `${Math.round(x.bytes / 1024)} KB`;
  const before = x.before ? `before (${x.before.revision}) p50 ${ms(x.before.p50)}, p95 ${ms(x.before.p95)}` : 'before: not measured';
  return [
    [`redactSecrets, ${kb} of agent text, p50 (n=${x.current.n})`, '-', ms(x.current.p50), before, 'reported', '-'],
    ...(x.falsePositives
      ? [[`redactSecrets, clean corpus lines changed (false positives)`, '-', `${x.falsePositives.current}`, x.falsePositives.before === undefined ? '-' : `before ${x.falsePositives.before}`, '0', verdict(x.falsePositives.current === 0)] as Row]
      : []),
    [`redactSecrets, ${kb}, p95`, '-', ms(x.current.p95), `slowest 1 MB adversarial line ${ms(x.adversarialMaxMs)}`, 'p95 <= 5 ms, 1 MB <= 3 s', verdict(x.current.p95 <= 5 && x.adversarialMaxMs <= 3000)],
  ];
}

/** XState is the runtime of every turn: what its actor costs alone, beside the same steps with none. */
function actorRow(x: ActorCostResult): Row {
  const us = (n: number) => `${round(n, 1)} µs`;
  return [`conversation actor, CPU per turn (n=${x.turns}, ${x.invokedSteps} steps resolving at once)`, '-', us(x.actorCpuUs), `the same steps awaited, no runtime: ${us(x.plainCpuUs)}`, 'reported', '-'];
}

/** NATS mode beside the embedded rows above: what the bus and control stores on NATS add. */
function natsRows(n: NonNullable<Results['nats']>, embedded: LatencyResult, embeddedCapacity: CapacityResult): Row[] {
  const { latency4k: a, capacity: c } = n;
  const overEmbedded = a.addedP50 - embedded.addedP50;
  return [
    [`NATS mode: 4 KB ${a.protocol}, p50 (n=${a.engram.n})`, ms(a.direct.p50), ms(a.engram.p50), `+${ms(a.addedP50)}; over embedded +${ms(overEmbedded)}`, '<= embedded + 0.3 ms', verdict(overEmbedded <= 0.3 && a.errors === 0), ...bareCells(a, 'p50')],
    [`NATS mode: 4 KB ${a.protocol}, p99`, ms(a.direct.p99), ms(a.engram.p99), `+${ms(a.addedP99)} (embedded +${ms(embedded.addedP99)})`, '-', '-', ...bareCells(a, 'p99')],
    [
      `NATS mode: req/s at ${c.concurrency} concurrent`,
      `${round(c.direct.rps, 0)}`,
      `${round(c.engram.rps, 0)}`,
      `embedded ${round(embeddedCapacity.engram.rps, 0)}; errors ${c.engram.errors}`,
      'reported',
      '-',
      ...bareLoadCells(c),
    ],
  ];
}

/**
 * Learning stays cheap: what extraction and tagging send upstream over an agent session,
 * against what the session itself sends; and every user request, final answer and
 * evidence line still reaches extraction, every memory remembered without tags is tagged.
 * Each task alone in a fresh conversation is reported beside. (Results written before
 * tagging existed have no tagging fields: they count as none.)
 */
function extractionCostRows(x: ExtractionCostResult): Row[] {
  const kb = (bytes: number) => `${round(bytes / 1024, 1)} KB`;
  const detail = (run: ExtractionCostResult['session']) =>
    `extraction ${kb(run.extraction_bytes)} in ${run.extraction_requests} calls + tagging ${kb(run.tagging_bytes ?? 0)} in ${run.tagging_requests ?? 0} calls ` +
    `/ ${kb(run.conversation_bytes)} in ${run.conversation_requests} requests; ` +
    `lessons ${run.lessons_kept}/${run.lessons}${run.missing.length ? ` (missing: ${run.missing[0].slice(0, 40)}…)` : ''}; ` +
    `memories tagged ${run.tagged ?? 0}/${run.remembered ?? 0}`;
  const { session: s, task_alone: t } = x;
  return [
    [
      `learning (extraction + tagging) / conversation bytes, ${x.tasks}-task agent session`,
      '-',
      pct(s.ratio),
      `${detail(s)}; dead letters ${x.dead_letters}`,
      '<= 5%, lessons all kept, memories all tagged',
      verdict(s.ratio <= 0.05 && s.lessons_kept === s.lessons && (s.tagged ?? 0) === (s.remembered ?? 0) && x.dead_letters === 0),
    ],
    [`  of which extraction / of which tagging`, '-', `${pct(s.extraction_ratio ?? s.ratio)} / ${pct(s.tagging_ratio ?? 0)}`, `tagging interval ${x.tagging_interval_ms ?? '-'} ms`, 'reported', '-'],
    [`the same, each task alone in a new conversation`, '-', pct(t.ratio), detail(t), 'reported', '-'],
  ];
}

/** Transcript uploads: accepted (2xx) within a second, memory that does not follow the body. */
function transcriptRows(t: TranscriptBenchResult): Row[] {
  const ok = (status: number) => status >= 200 && status < 300;
  const upload = (u: { status: number; ms: number }) => `${u.status} in ${ms(u.ms)}`;
  return [
    [
      `20 MB Codex rollout accepted, p50 (n=${t.fresh_20mb.n}, ${t.fresh_20mb.turns} turns each)`,
      '-',
      ms(t.fresh_20mb.p50_ms),
      `max ${ms(t.fresh_20mb.max_ms)}; statuses ${[...new Set(t.fresh_20mb.statuses)].join(',')}`,
      '2xx within 1 s',
      verdict(t.fresh_20mb.max_ms <= 1000 && t.fresh_20mb.statuses.every(ok)),
    ],
    ['20 MB re-upload: identical / grown by 3 turns', '-', upload(t.unchanged_20mb), `grown ${upload(t.grown_20mb)}`, '2xx within 1 s', verdict(ok(t.unchanged_20mb.status) && ok(t.grown_20mb.status) && Math.max(t.unchanged_20mb.ms, t.grown_20mb.ms) <= 1000)],
    ['60 MB Codex rollout', '-', upload(t.upload_60mb), `${round(t.upload_60mb.body_bytes / 2 ** 20, 0)} MB body`, 'reported', '-'],
    ['Engram RSS during uploads', '-', mb(t.rss_peak_20mb), `before ${mb(t.rss_before)}, peak with 20 MB bodies ${mb(t.rss_peak_20mb)}, with 60 MB ${mb(t.rss_peak_60mb)}`, 'bounded', '-'],
  ];
}

/** `recall` over HTTP through one MCP SDK client session. */
function mcpRows(m: McpRecallResult): Row[] {
  const what = `MCP recall over HTTP, ${m.reflections} reflections`;
  return [
    [`${what}, p50 (n=${m.n})`, '-', ms(m.p50_ms), `p99 ${ms(m.p99_ms)}, max ${ms(m.max_ms)}; cold ${ms(m.cold_ms)}`, '-', '-'],
    [
      `${what}, p95`,
      '-',
      ms(m.p95_ms),
      `hits ${pct(m.hit_share)}; errors ${m.errors}${m.first_error ? ` (${m.first_error.slice(0, 60)})` : ''}`,
      'p95 ≤ 15 ms',
      verdict(m.p95_ms <= 15 && m.errors === 0 && m.n > 0),
    ],
  ];
}

/** The Responses rows: HTTP with the same targets as above, then the WebSocket mode. */
function responsesRows({ http, ws }: ResponsesResults): Row[] {
  const { body_4k: a, body_400k: b, stream_ttfb: t } = http;
  const c = ws.concurrent500;
  const kb = (bytes: number) => `${round(bytes / 1024, 0)} KB`;
  const added = (x: number) => `+${ms(x)}`;
  const wsOk = ws.errors === 0;
  return [
    [`Responses ${kb(a.body_bytes)}, p50 (n=${a.n})`, ms(a.direct_p50_ms), ms(a.engram_p50_ms), added(a.added_p50_ms), '<= 1 ms', verdict(a.added_p50_ms <= 1 && a.errors === 0)],
    [`Responses ${kb(a.body_bytes)}, p99`, ms(a.direct_p99_ms), ms(a.engram_p99_ms), added(a.added_p99_ms), '<= 5 ms', verdict(a.added_p99_ms <= 5 && a.errors === 0)],
    [`Responses ${kb(b.body_bytes)}, p50 (n=${b.n})`, ms(b.direct_p50_ms), ms(b.engram_p50_ms), added(b.added_p50_ms), '<= 8 ms', verdict(b.added_p50_ms <= 8 && b.errors === 0)],
    [`Responses ${kb(b.body_bytes)}, p99`, ms(b.direct_p99_ms), ms(b.engram_p99_ms), added(b.added_p99_ms), '-', '-'],
    [`Responses stream TTFB, p50 (n=${t.n})`, ms(t.direct_p50_ms), ms(t.engram_p50_ms), added(t.added_p50_ms), '<= 2 ms', verdict(t.added_p50_ms <= 2 && t.errors + t.incomplete === 0)],
    [
      'Responses with x-engram-injected > 0',
      '-',
      pct(a.injected_share),
      `4 KB ${pct(a.injected_share)}, 400 KB ${pct(b.injected_share)}, stream ${pct(t.injected_share)}; errors ${a.errors + b.errors + t.errors}`,
      '> 0',
      verdict(Math.min(a.injected_share, b.injected_share, t.injected_share) > 0),
    ],
    // Direct is the upstream's HTTP streaming TTFB for the same (expanded) body: it has no WebSocket.
    [
      `WS first event, p50 (n=${ws.engram_ws_first_event.n}; ${ws.chains} chains x ${ws.turns_per_chain} turns)`,
      `${ms(ws.direct_http_ttfb.p50)} (HTTP)`,
      ms(ws.engram_ws_first_event.p50),
      `${added(ws.first_event_added_p50_ms)}; chained turns only ${added(ws.chained_added_p50_ms)}; errors ${ws.errors}`,
      '<= 2 ms',
      verdict(ws.first_event_added_p50_ms <= 2 && wsOk),
    ],
    ['WS first event, p99', `${ms(ws.direct_http_ttfb.p99)} (HTTP)`, ms(ws.engram_ws_first_event.p99), added(ws.first_event_added_p99_ms), '-', '-'],
    [
      `${c.connections} WS x ${c.turns_per_connection} turns, store: false`,
      '-',
      `${c.turns_ok}/${c.turns} ok`,
      `errors ${c.errors}; connect ${round(c.connect_s, 2)} s, total ${round(c.total_s, 2)} s; ${round(c.turns_per_s, 0)} turns/s; first event p50 ${ms(c.first_event.p50)}, p99 ${ms(c.first_event.p99)}`,
      '0 errors',
      verdict(c.errors === 0 && c.turns_ok === c.turns),
    ],
    [
      `Engram memory, ${c.connections} WS`,
      '-',
      `${round(c.rss_peak_mb, 0)} MB`,
      `RSS before ${round(c.rss_before_mb, 0)} MB, peak ${round(c.rss_peak_mb, 0)} MB, after ${round(c.rss_after_mb, 0)} MB; heap peak ${round(c.heap_peak_mb, 0)} MB`,
      'reported',
      '-',
    ],
  ];
}

export function table(r: Results): string {
  // Printed with the references beside direct, and Engram's ratios to them after the added time.
  const columns = (row: Row): string[] => {
    const [measure, direct, engram, figure, target, result, bare = '-', vsBare = '-', gateway = '-', vsGateway = '-'] = row;
    return [measure, direct, bare, gateway, engram, figure, vsBare, vsGateway, target, result];
  };
  const header = ['measure', 'direct', 'bare proxy', 'gateway', 'engram', 'added / detail', 'engram vs bare', 'engram vs gateway', 'target', 'result'];
  const body = rows(r).map(columns);
  const all = [header, ...body];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  const line = (row: string[]) => '| ' + row.map((cell, i) => cell.padEnd(widths[i])).join(' | ') + ' |';
  return [line(header), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n');
}

export function writeJson(r: Results, dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${r.startedAt.replaceAll(':', '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ ...r, verdicts: rows(r).map(([measure, , , , target, result]) => ({ measure, target, result })) }, null, 2) + '\n');
  return file;
}
