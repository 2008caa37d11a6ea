/**
 * An agent's optional daily budget for Engram's own upstream calls (extraction, tagging):
 * what those calls spend is counted per agent and UTC day, and once the day's input plus
 * output tokens reach `MemorySettings.dailyTokenBudget`, the agent's jobs are not run but
 * queued again for the next 00:00 UTC (`memory-job.ts`): never dropped, and
 * never counted as a failed delivery. The check is made before each call, so the call
 * that crosses the budget runs whole, and the budget is passed by at most that call (plus
 * what other replicas counted in the last few seconds).
 */
import type { Agent } from '../domain/types.js';
import type { TokenUsage } from '../protocols/types.js';
import type { JobKind } from './agent-jobs.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Where Engram's calls to an agent's upstream are counted, and what they spent today. */
export interface SpendMeter {
  /** Counts one answered call of a `job` for the agent's current day, with the tokens its answer reports. */
  spent(agentId: string, job: JobKind, usage: TokenUsage | undefined): void;
  /** Input plus output tokens the agent's extraction and tagging calls used today (UTC, by the app's clock). */
  tokensToday(agentId: string): Promise<number>;
}

/** The next 00:00 UTC after `now`: when a day's budget starts afresh. */
export function nextUtcDay(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

/** The agent's daily budget in tokens, or null when it has none. */
export function dailyBudget(agent: Agent): number | null {
  return agent.memory.dailyTokenBudget ?? null;
}

/**
 * When the agent's jobs may run again because today's budget is spent (the next 00:00
 * UTC), or undefined while it has budget left (or none is set, or nothing counts spend).
 */
export async function budgetReached(meter: SpendMeter | undefined, agent: Agent, now: number): Promise<number | undefined> {
  const budget = dailyBudget(agent);
  if (!meter || budget === null) return undefined;
  return (await meter.tokensToday(agent.id)) >= budget ? nextUtcDay(now) : undefined;
}
