/** Small helpers shared by the contract suites (uvu/assert has no async `rejects`). */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventBus } from '../../src/ports/index.js';

/** Asserts that `run` rejects, optionally with a message matching `pattern`. */
export async function rejects(run: () => Promise<unknown>, pattern?: RegExp, message?: string): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    if (pattern) assert.match(error instanceof Error ? error.message : String(error), pattern, message);
    return error;
  }
  assert.unreachable(message ?? 'expected a rejection');
  return undefined;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `condition` until it holds; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 3000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) assert.unreachable(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Waits until `bus` is idle on `subjects`: nothing pending, and no delivery for `quietMs`
 * (one ack wait) since. A delivery left unsettled, or one made twice, shows up within that,
 * so "handled once" asserted afterwards can fail; after a fixed sleep, a redelivery due
 * after the default 30 s ack wait never could.
 */
export async function busIdle(bus: Pick<EventBus, 'pending'>, subjects: readonly string[], deliveries: () => number, quietMs: number): Promise<void> {
  let count = -1;
  let since = 0;
  await waitFor(
    async () => {
      const pending = await Promise.all(subjects.map((subject) => bus.pending(subject)));
      if (pending.some((n) => n > 0) || deliveries() !== count) {
        count = deliveries();
        since = Date.now();
        return false;
      }
      return Date.now() - since >= quietMs;
    },
    10_000,
    'the bus to be idle',
  );
}

/** A unit-length vector from the given components (the rest zero). */
export function unitVector(dims: number, components: Record<number, number>): Float32Array {
  const vector = new Float32Array(dims);
  for (const [index, value] of Object.entries(components)) vector[Number(index)] = value;
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm === 0) throw new Error('zero vector');
  for (let i = 0; i < dims; i++) vector[i] /= norm;
  return vector;
}

export interface Harness {
  cleanup(): Promise<void>;
}

/** An uvu suite that opens a fresh harness (adapter + its storage) before each test and cleans it up after. */
export function harnessSuite<H extends Harness>(title: string, open: () => Promise<H>) {
  const test = suite<{ harness?: H }>(title, {});
  test.before.each(async (context) => {
    context.harness = await open();
  });
  test.after.each(async (context) => {
    await context.harness?.cleanup();
    context.harness = undefined;
  });
  const harness = (context: { harness?: H }): H => {
    if (!context.harness) throw new Error('harness not opened');
    return context.harness;
  };
  return { test, harness };
}
