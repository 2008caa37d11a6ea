/** Percentiles of millisecond samples. */

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of sorted samples. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length) - 1;
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank))];
}

export function summarise(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((sum, x) => sum + x, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean,
  };
}

export const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Engram's figure over the bare proxy's (issue 12). Null when the bare proxy added
 * nothing measurable (its added time at or below zero): a ratio to noise is no figure.
 */
export function ratioTo(engram: number, bare: number): number | null {
  return Number.isFinite(engram) && Number.isFinite(bare) && bare > 0 ? engram / bare : null;
}

/** Milliseconds with their sign: `+1.2 ms`, `-0.16 ms`. */
export const signedMs = (x: number): string => `${x < 0 ? '-' : '+'}${round(Math.abs(x), 2)} ms`;
