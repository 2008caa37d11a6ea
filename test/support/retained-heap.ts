/**
 * The heap a piece of code keeps alive, not the garbage it leaves for later: `heapUsed` read
 * right after a full collection. Without one, what a sample sees depends on when V8 chose to
 * collect, which moves with everything else the suite process has run before (a long suite
 * grows the old generation's limit, and garbage waits longer).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/**
 * Bytes live after a full collection (the JavaScript heap, and with `withBuffers` the memory
 * of live Buffers and ArrayBuffers too), and how long that collection held the thread.
 */
export function retainedHeap({ withBuffers = false } = {}): { bytes: number; collectMs: number } {
  const start = performance.now();
  collect();
  const usage = process.memoryUsage();
  return { bytes: usage.heapUsed + (withBuffers ? usage.arrayBuffers : 0), collectMs: performance.now() - start };
}
