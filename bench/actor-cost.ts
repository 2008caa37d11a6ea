/**
 * What the conversation actor itself costs a turn (issue 33, "XState stays the runtime,
 * made cheap"): the real conversation machine, its seven steps provided as promises that
 * resolve at once, run to its end turn after turn in this process; beside the same six
 * steps awaited one after the other with no runtime. CPU time per turn (user + system),
 * after a warm-up; what is left is XState's own work: an actor per turn and per invoked
 * step, its snapshots, microsteps and an `AbortController` per step.
 *
 * Alone: `node --import tsx bench/actor-cost.ts [--quick]`. `npm run bench` runs it as one phase.
 */
import { createActor, fromPromise, toPromise } from 'xstate';
import { conversationMachine, type ForwardResult, type PublishResult, type RecordResult, type RelayResult, type TurnTypes } from '../machines/conversation.machine.js';

export interface ActorCostResult {
  turns: number;
  /** CPU µs per turn of the real machine with steps that resolve at once. */
  actorCpuUs: number;
  /** CPU µs per turn of the same steps awaited in sequence, no runtime. */
  plainCpuUs: number;
  /** Steps the turn invokes (authentication given by the transport, as on the HTTP routes). */
  invokedSteps: number;
}

type BareTurn = TurnTypes & { request: object; authenticated: object; resolved: object; injected: object };

const outputs: { resolveConversation: object; inject: object; forward: ForwardResult; relay: RelayResult; publish: PublishResult; record: RecordResult } = {
  resolveConversation: { resolved: true },
  inject: { injected: 0 },
  forward: { ok: true },
  relay: { outcome: 'completed', final: true },
  publish: { job: 'none' },
  record: { state: 'recorded' },
};

const machine = conversationMachine<BareTurn>().provide({
  actors: {
    authenticate: fromPromise(async () => ({})),
    resolveConversation: fromPromise(async () => outputs.resolveConversation),
    inject: fromPromise(async () => outputs.inject),
    forward: fromPromise(async () => outputs.forward),
    relay: fromPromise(async () => outputs.relay),
    publish: fromPromise(async () => outputs.publish),
    record: fromPromise(async () => outputs.record),
  },
});

async function actorTurn(): Promise<void> {
  const actor = createActor(machine, { input: { request: {}, authenticated: {} } });
  // As `runExchange` does: told of each state the turn enters.
  actor.subscribe(() => undefined);
  const ended = toPromise(actor);
  actor.start();
  const output = await ended;
  if (output.status !== 'settled') throw new Error(`the bare turn ended ${output.status}`);
}

async function plainTurn(): Promise<void> {
  const context: Record<string, unknown> = {};
  for (const [name, output] of Object.entries(outputs)) context[name] = await Promise.resolve(output);
}

async function cpuPerTurn(turn: () => Promise<void>, turns: number): Promise<number> {
  for (let i = 0; i < Math.min(2000, turns); i++) await turn();
  const before = process.cpuUsage();
  for (let i = 0; i < turns; i++) await turn();
  const { user, system } = process.cpuUsage(before);
  return (user + system) / turns;
}

export async function actorCost(options: { turns: number }): Promise<ActorCostResult> {
  const actorCpuUs = await cpuPerTurn(actorTurn, options.turns);
  const plainCpuUs = await cpuPerTurn(plainTurn, options.turns);
  return { turns: options.turns, actorCpuUs, plainCpuUs, invokedSteps: Object.keys(outputs).length };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await actorCost({ turns: process.argv.includes('--quick') ? 2000 : 20_000 });
  console.log(JSON.stringify(result, null, 2));
}
