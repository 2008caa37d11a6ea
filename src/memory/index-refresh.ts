/**
 * Rebuilds of the root index that a read caused: `recall` hits change use counts and
 * last-used times, which order the index (most used first). A rebuild lists every
 * reflection of the agent, so it runs once per agent per `delayMs`, after the uses of
 * that moment have landed, not once per hit.
 */
import type { ReflectionStore } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { rebuildRootIndex } from './root-index.js';

export interface IndexRefresher {
  /** Rebuilds the agent's index within `delayMs` (one rebuild for every call in between). */
  touch(agentId: string): void;
  /** Runs the pending rebuilds now (at shutdown) and stops scheduling. */
  close(): Promise<void>;
}

export function createIndexRefresher(
  deps: { reflections: ReflectionStore; control: Control; onError?: (error: unknown) => void },
  delayMs = 2_000,
): IndexRefresher {
  const pending = new Map<string, NodeJS.Timeout>();
  const running = new Set<Promise<unknown>>();
  let closed = false;
  const rebuild = (agentId: string) => {
    pending.delete(agentId);
    const run = rebuildRootIndex(agentId, deps).catch((error) => deps.onError?.(error));
    running.add(run);
    void run.finally(() => running.delete(run));
  };
  return {
    touch(agentId) {
      if (closed || pending.has(agentId)) return;
      pending.set(agentId, setTimeout(() => rebuild(agentId), delayMs).unref());
    },
    async close() {
      closed = true;
      for (const [agentId, timer] of pending) {
        clearTimeout(timer);
        rebuild(agentId);
      }
      await Promise.all(running);
    },
  };
}
