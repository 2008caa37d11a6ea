/**
 * Request/response over the Node IPC channel between the bench and its two children
 * (the scripted upstream and Engram), so each runs on its own event loop and core.
 */
import { fork, type ChildProcess } from 'node:child_process';

type Handler = (args: any) => unknown | Promise<unknown>;

interface Call {
  id: number;
  cmd: string;
  args?: unknown;
}

interface Answer {
  id: number;
  ok: boolean;
  result?: unknown;
  error?: string;
}

/** Child side: answers the parent's calls with `handlers`, then says it is ready with `hello`. */
export function serveParent(handlers: Record<string, Handler>, hello: unknown): void {
  if (!process.send) throw new Error('bench children must be started with an IPC channel');
  process.on('message', async (message: Call) => {
    const handler = handlers[message.cmd];
    let answer: Answer;
    try {
      if (!handler) throw new Error(`unknown command ${message.cmd}`);
      answer = { id: message.id, ok: true, result: await handler(message.args) };
    } catch (error) {
      answer = { id: message.id, ok: false, error: error instanceof Error ? error.stack ?? error.message : String(error) };
    }
    process.send!(answer);
  });
  // The parent going away (even by SIGKILL) must not leave this child running.
  process.on('disconnect', () => process.exit(0));
  process.send({ id: 0, ok: true, result: hello } satisfies Answer);
}

export interface Child<Hello> {
  process: ChildProcess;
  hello: Hello;
  call<T = unknown>(cmd: string, args?: unknown, timeoutMs?: number): Promise<T>;
  /** Asks the child to close, then kills it if it has not exited within `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

export interface ChildOptions {
  execArgv?: string[];
  env?: Record<string, string>;
  startTimeoutMs?: number;
}

/** Starts `file` under tsx with an IPC channel and waits for its hello. */
export async function startChild<Hello>(file: string, options: ChildOptions = {}): Promise<Child<Hello>> {
  const { execArgv = [], env = {}, startTimeoutMs = 60_000 } = options;
  const child = fork(file, [], {
    execArgv: ['--import', 'tsx', ...execArgv],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => (live.delete(child), resolve())));
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let next = 1;
  const hello = await new Promise<Hello>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start within ${startTimeoutMs} ms`)), startTimeoutMs);
    child.once('exit', (code) => reject(new Error(`${file} exited early with code ${code}`)));
    child.on('message', (answer: Answer) => {
      if (answer.id === 0) {
        clearTimeout(timer);
        resolve(answer.result as Hello);
        return;
      }
      const waiter = pending.get(answer.id);
      pending.delete(answer.id);
      if (answer.ok) waiter?.resolve(answer.result);
      else waiter?.reject(new Error(`${file}: ${answer.error}`));
    });
  }).catch((error) => {
    child.kill('SIGKILL');
    throw error;
  });
  child.once('exit', (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${file} exited (${code ?? signal})`));
    pending.clear();
  });
  return {
    process: child,
    hello,
    call<T>(cmd: string, args?: unknown, timeoutMs = 120_000): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => (pending.delete(id), reject(new Error(`${file}: ${cmd} timed out`))), timeoutMs);
        pending.set(id, {
          resolve: (value) => (clearTimeout(timer), resolve(value as T)),
          reject: (error) => (clearTimeout(timer), reject(error)),
        });
        child.send({ id, cmd, args } satisfies Call);
      });
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ id: -1, cmd: 'close' } satisfies Call);
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Samples this process's RSS so a child can report its peak over a phase. */
export function rssSampler(intervalMs = 50) {
  let peak = process.memoryUsage.rss();
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, intervalMs);
  timer.unref();
  return {
    memory: () => {
      const rss = process.memoryUsage.rss();
      peak = Math.max(peak, rss);
      return { rss, peak, heapUsed: process.memoryUsage().heapUsed };
    },
    resetPeak: () => {
      peak = process.memoryUsage.rss();
      return peak;
    },
  };
}
