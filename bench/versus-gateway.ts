/**
 * Issue 22's targets, set against the Portkey gateway (what a user would run instead of
 * Engram) measured in the same run, on the multi-turn agent workload with memory on and
 * extraction running:
 *   - one user: Engram's added p50 at most 1.0 times the gateway's;
 *   - 50 users: Engram's req/s at least 1.2 times the gateway's;
 *   - a 400 KB conversation continued turn by turn: added p50 at most 4 ms.
 * Reported, never enforced (no test fails on them). A quick run has too few samples: its
 * figures are printed without a verdict. Unlike issue 12's targets against the bare proxy,
 * these hold on 2 cores too: the gateway is a Node proxy sharing the same cores.
 */
import type { MultiTurnResult } from './multi-turn.js';
import { ratioTo, round, signedMs } from './stats.js';

export interface GatewayTarget {
  measure: string;
  target: string;
  figure: string;
  met: boolean;
  /** `met`, `not met`, or `no verdict (quick run)`. */
  result: string;
}

const times = (x: number | null) => (x === null ? 'n/a' : `${round(x, 2)}x`);

export function gatewayTargets(r: { multiTurn?: MultiTurnResult }, run: { quick: boolean }): GatewayTarget[] {
  const m = r.multiTurn;
  if (!m?.concurrent.gateway || m.sequential.gatewayAddedP50 === undefined) return [];
  const found: Array<Omit<GatewayTarget, 'result'>> = [];
  const s = m.sequential;
  found.push({
    measure: `multi-turn, 1 user, ${m.turnsPerConversation} turns, added p50`,
    target: 'engram <= 1.0x gateway',
    figure: `${times(ratioTo(s.addedP50, s.gatewayAddedP50!))} (engram ${signedMs(s.addedP50)}, gateway ${signedMs(s.gatewayAddedP50!)}); errors ${s.errors}`,
    met: s.addedP50 <= s.gatewayAddedP50! && s.errors === 0,
  });
  const { engram, gateway } = m.concurrent;
  found.push({
    measure: `multi-turn, ${engram.virtualUsers} users, req/s`,
    target: 'engram >= 1.2x gateway',
    figure: `${times(ratioTo(engram.rps, gateway.rps))} (${round(engram.rps, 0)} / ${round(gateway.rps, 0)}); errors ${engram.errors}`,
    met: engram.rps >= 1.2 * gateway.rps && engram.errors === 0,
  });
  const x = m.continued400k;
  found.push({
    measure: `${Math.round(x.bodyBytes.min / 1024)} KB conversation continued, added p50`,
    target: '<= 4 ms',
    figure: `${signedMs(x.addedP50)} (gateway ${x.gatewayAddedP50 === undefined ? 'n/a' : signedMs(x.gatewayAddedP50)}, bare ${signedMs(x.bareAddedP50)}); errors ${x.errors}`,
    met: x.addedP50 <= 4 && x.errors === 0,
  });
  return found.map((t) => ({ ...t, result: run.quick ? 'no verdict (quick run)' : t.met ? 'met' : 'not met' }));
}
