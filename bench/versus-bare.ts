/**
 * Issue 12's targets, set against the bare proxy reference rather than in milliseconds,
 * so they mean the same on a laptop and on a server:
 *   - sequential: Engram's added p50 at most 3 times the bare proxy's;
 *   - 50 concurrent: at least half the bare proxy's req/s, with Engram's added p99 at
 *     most 3 times the bare proxy's;
 *   - a 400 KB conversation continued turn by turn: added p50 at most 4 ms.
 * A verdict is given only on a full run on at least 4 cores: with fewer, the load
 * generator, the upstream and the proxy share cores and the ratios measure contention;
 * a quick run has too few samples. Without a verdict the figures are still reported.
 */
import type { CapacityResult, LatencyResult } from './phases.js';
import type { MultiTurnResult } from './multi-turn.js';
import { ratioTo, round, signedMs } from './stats.js';

export const MIN_CORES = 4;

export interface BareTarget {
  /** Which measure, as the table names it. */
  measure: string;
  target: string;
  /** The figures compared, in words. */
  figure: string;
  /** Whether the figures meet the target (given even when no verdict is). */
  met: boolean;
  /** `PASS`, `MISS`, or `no verdict (why)`. */
  result: string;
}

export interface BareVerdicts {
  given: boolean;
  /** Why no verdict is given, when none is. */
  reason?: string;
  cpus: number;
  quick: boolean;
  targets: BareTarget[];
}

interface Sources {
  latency4k: LatencyResult;
  latency400k: LatencyResult;
  capacity: CapacityResult;
  firstByte: LatencyResult;
  multiTurn?: MultiTurnResult;
}

const times = (x: number | null) => (x === null ? 'n/a' : `${round(x, 2)}x`);

function sequentialTarget(measure: string, engramAdded: number, bareAdded: number): Omit<BareTarget, 'result'> {
  return {
    measure,
    target: 'added p50 <= 3x bare',
    figure: `${times(ratioTo(engramAdded, bareAdded))} (engram ${signedMs(engramAdded)}, bare ${signedMs(bareAdded)})`,
    met: engramAdded <= 3 * bareAdded,
  };
}

interface Load {
  rps: number;
  errors: number;
  latency: { p99: number };
}

function capacityTarget(measure: string, direct: Load, bare: Load, engram: Load): Omit<BareTarget, 'result'> {
  const engramAdded = engram.latency.p99 - direct.latency.p99;
  const bareAdded = bare.latency.p99 - direct.latency.p99;
  return {
    measure,
    target: 'req/s >= 0.5x bare, added p99 <= 3x bare',
    figure:
      `req/s ${times(ratioTo(engram.rps, bare.rps))} (${round(engram.rps, 0)} / ${round(bare.rps, 0)}); ` +
      `added p99 ${times(ratioTo(engramAdded, bareAdded))} (engram ${signedMs(engramAdded)}, bare ${signedMs(bareAdded)}); errors ${engram.errors}`,
    met: engram.rps >= 0.5 * bare.rps && engramAdded <= 3 * bareAdded && engram.errors === 0,
  };
}

export function bareVerdicts(r: Sources, run: { quick: boolean; cpus: number }): BareVerdicts {
  const reason = run.quick ? 'quick run' : run.cpus < MIN_CORES ? `${run.cpus} cores < ${MIN_CORES}` : undefined;
  const found: Array<Omit<BareTarget, 'result'>> = [];
  for (const [name, x] of [
    [`${Math.round(r.latency4k.bodyBytes / 1024)} KB ${r.latency4k.protocol}, sequential`, r.latency4k],
    [`${Math.round(r.latency400k.bodyBytes / 1024)} KB ${r.latency400k.protocol}, sequential`, r.latency400k],
    [`stream TTFB ${r.firstByte.protocol}, sequential`, r.firstByte],
  ] as const) {
    if (x.bareAddedP50 !== undefined) found.push(sequentialTarget(name, x.addedP50, x.bareAddedP50));
  }
  const c = r.capacity;
  if (c.bare) found.push(capacityTarget(`4 KB chat, ${c.concurrency} concurrent`, c.direct, c.bare, c.engram));
  const m = r.multiTurn;
  if (m) {
    found.push(sequentialTarget(`multi-turn, 1 user, ${m.turnsPerConversation} turns`, m.sequential.addedP50, m.sequential.bareAddedP50));
    found.push(capacityTarget(`multi-turn, ${m.concurrent.engram.virtualUsers} users`, m.concurrent.direct, m.concurrent.bare, m.concurrent.engram));
    const x = m.continued400k;
    found.push({
      measure: `${Math.round(x.bodyBytes.min / 1024)} KB conversation continued`,
      target: 'added p50 <= 4 ms',
      figure: `${signedMs(x.addedP50)} (bare ${signedMs(x.bareAddedP50)}); errors ${x.errors}`,
      met: x.addedP50 <= 4 && x.errors === 0,
    });
  }
  return {
    given: reason === undefined,
    ...(reason ? { reason } : {}),
    cpus: run.cpus,
    quick: run.quick,
    targets: found.map((t) => ({ ...t, result: reason ? `no verdict (${reason})` : t.met ? 'PASS' : 'MISS' })),
  };
}
