/**
 * The overview's "learning spend today": what Engram's own extraction and tagging calls to
 * the agent's upstream used on the current UTC day, against the agent's daily token
 * budget, and, once it is spent, how many conversations wait for the next day.
 */
import { tokensSpent } from '../../domain/activity.js';
import type { Agent } from '../../domain/types.js';
import type { AgentJobs } from '../../memory/agent-jobs.js';
import { dailyBudget } from '../../memory/budget.js';
import { EXTRACTION_SUBJECT, type ExtractionJob } from '../../memory/extraction-job.js';
import type { DailyActivity } from '../../ports/activity.js';
import { dayOf } from '../../observability/activity.js';

export interface SpendToday {
  calls: { extraction: number; tagging: number };
  /** `cached`: of `input`, what the provider read from its prompt cache. */
  tokens: { input: number; output: number; total: number; cached: number };
  /** The agent's daily token budget; null: unlimited. */
  budget: number | null;
  /** The budget is spent: jobs wait for the next 00:00 UTC. */
  reached: boolean;
  /** Conversations whose extraction waits (distinct), counted when `reached`. */
  waiting: number;
}

/**
 * Today's spend from the agent's stored counts (written every few seconds). The budget
 * also counts as reached while a job deferred by it waits: the worker that deferred it
 * counted spend the store may not show yet.
 */
export function spendToday(agent: Agent, activity: readonly DailyActivity[], jobs: AgentJobs, now: number): SpendToday {
  const today = activity.find((row) => row.day === dayOf(now));
  const input = (today?.extractionInputTokens ?? 0) + (today?.taggingInputTokens ?? 0);
  const output = (today?.extractionOutputTokens ?? 0) + (today?.taggingOutputTokens ?? 0);
  const cached = (today?.extractionCachedInputTokens ?? 0) + (today?.taggingCachedInputTokens ?? 0);
  const budget = dailyBudget(agent);
  const deferred = jobs.queued.some((job) => ((job.payload as Partial<ExtractionJob> | null)?.deferred?.until ?? 0) > now);
  const reached = budget !== null && (tokensSpent(today ?? {}) >= budget || deferred);
  const conversations = new Set(
    jobs.queued.flatMap((job) => (job.subject === EXTRACTION_SUBJECT ? [(job.payload as Partial<ExtractionJob> | null)?.conversationId ?? job.id] : [])),
  );
  return {
    calls: { extraction: today?.extractionCalls ?? 0, tagging: today?.taggingCalls ?? 0 },
    tokens: { input, output, total: input + output, cached },
    budget,
    reached,
    waiting: reached ? conversations.size : 0,
  };
}
