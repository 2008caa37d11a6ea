/**
 * What every ActivityStore adapter accepts (`src/ports/activity.ts`), checked above the
 * engine so SQLite and NATS refuse the same input. Pure: the adapters turn a problem into
 * `EngramError('invalid_request')` (domain imports nothing outside itself).
 */

/**
 * The counts kept per agent and day, in the order they are stored: proxied requests,
 * reflections injected, extraction jobs done, and what Engram's own calls to the agent's
 * upstream spent (calls answered, input and output tokens as the answers report them),
 * for extraction and for tagging, and of the input, what the provider read from its
 * prompt cache (billed at a fraction of the price; counted in the input too).
 */
export const ACTIVITY_COUNTS = [
  'requests',
  'injected',
  'extractions',
  'extractionCalls',
  'extractionInputTokens',
  'extractionOutputTokens',
  'taggingCalls',
  'taggingInputTokens',
  'taggingOutputTokens',
  'extractionCachedInputTokens',
  'taggingCachedInputTokens',
] as const;

export type ActivityCountName = (typeof ACTIVITY_COUNTS)[number];

/** An increment with every count present. */
export type ActivityIncrement = Record<ActivityCountName, number>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Whether `value` is a calendar day written `YYYY-MM-DD`. Both adapters compare days as
 * text (an SQL `>=`, the last token of a KV key), which orders them by date only in
 * exactly this form, so `2024-1-5` or `2024-02-30` are refused rather than misplaced.
 */
export function isActivityDay(value: unknown): value is string {
  if (typeof value !== 'string' || !DAY.test(value)) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Why `value` is not a day (naming it `name`), or undefined when it is one. */
export function dayProblem(value: unknown, name: string): string | undefined {
  return isActivityDay(value) ? undefined : `${name} must be a day written YYYY-MM-DD (UTC), got ${JSON.stringify(value)}`;
}

export type IncrementCheck = { ok: true; counts: ActivityIncrement } | { ok: false; problem: string };

/**
 * Checks one `add`: a valid day and counts that are non-negative safe integers (absent or
 * undefined ones count 0). On success, the counts with every name present.
 */
export function checkIncrement(day: unknown, counts: Partial<Record<ActivityCountName, unknown>>): IncrementCheck {
  const badDay = dayProblem(day, 'day');
  if (badDay) return { ok: false, problem: badDay };
  if (typeof counts !== 'object' || counts === null) return { ok: false, problem: 'counts must be an object' };
  const complete = emptyCounts();
  for (const name of ACTIVITY_COUNTS) {
    const value = counts[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      return { ok: false, problem: `${name} must be a non-negative integer, got ${String(value)}` };
    }
    complete[name] = value;
  }
  return { ok: true, counts: complete };
}

/** Whether an increment adds nothing (an adapter then writes nothing: empty days stay absent). */
export function isEmptyIncrement(counts: ActivityIncrement): boolean {
  return ACTIVITY_COUNTS.every((name) => counts[name] === 0);
}

/** Every count at 0. */
export function emptyCounts(): ActivityIncrement {
  return Object.fromEntries(ACTIVITY_COUNTS.map((name) => [name, 0])) as ActivityIncrement;
}

/** The input and output tokens of extraction and tagging together (cached input included: it is input): what a daily budget caps. */
export function tokensSpent(counts: Partial<ActivityIncrement>): number {
  return (counts.extractionInputTokens ?? 0) + (counts.extractionOutputTokens ?? 0) + (counts.taggingInputTokens ?? 0) + (counts.taggingOutputTokens ?? 0);
}
