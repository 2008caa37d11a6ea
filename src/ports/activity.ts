/**
 * What each agent did, per day (UTC): requests proxied, reflections injected into them,
 * conversations learnt from (extraction jobs done), and what Engram's extraction and
 * tagging calls to its upstream spent (calls, input and output tokens, the input read from
 * the provider's prompt cache), which a daily budget caps. The dashboard's "counts over
 * time". Counts arrive as increments, summed by the process over a few seconds
 * (`observability/activity.ts`), so the store sees one write per agent and day every few
 * seconds, never one per request. Every adapter passes `test/contracts/activity.contract.ts`.
 *
 * `add` is atomic per agent and day: increments from several replicas at once are all
 * counted (a KV store updates with an expected revision and retries).
 */
import type { ActivityIncrement } from '../domain/activity.js';

/** One count per name of `ACTIVITY_COUNTS` (`src/domain/activity.ts`). */
export type DailyCounts = ActivityIncrement;

export interface DailyActivity extends DailyCounts {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
}

export interface ActivityStore {
  /** Adds `counts` (non-negative integers; absent ones count 0) to the agent's day. */
  add(agentId: string, day: string, counts: Partial<DailyCounts>): Promise<void>;
  /** The agent's days from `fromDay` on (inclusive), oldest first; days with nothing are absent. */
  read(agentId: string, fromDay: string): Promise<DailyActivity[]>;
  /** Forgets the agent's days (the agent was deleted). */
  deleteAgent(agentId: string): Promise<void>;
  /** Forgets every agent's days before `beforeDay`; returns how many days it deleted. */
  prune(beforeDay: string): Promise<number>;
  close(): Promise<void>;
}
