/**
 * What the bus's long-running loops (consumer slots, the scheduler's supervision of its
 * consume, the sweep) share: they survive every error (the server restarting, a consumer
 * deleted by an operator), report it, back off so they never spin hot, and stop promptly
 * when asked.
 */
import { JetStreamError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { withDeadline, type NatsContext } from './connection.js';

/** Backoff after `failures` consecutive failures: 100 ms doubling to 5 s, with jitter. */
export function retryDelayMs(failures: number): number {
  const base = Math.min(100 * 2 ** Math.max(0, failures - 1), 5_000);
  return base / 2 + Math.random() * (base / 2);
}

/**
 * A fetch that returns before this, empty and without an error, counts as a failure:
 * a server that keeps ending pull requests at once must not make the loop spin.
 */
export const SUSPICIOUSLY_FAST_MS = 50;

/**
 * One pull request: it waits up to 10 s on the server, and the server sends a heartbeat
 * every 2 s while it waits. Two missed heartbeats end a fetch with an error (a consume
 * asks for its consumer's info then, and ends if it is gone), so a pull the server forgot
 * (its consumer deleted just as the request went out, which nats-server 2.9 does not
 * report) is noticed in about 4 s, and the consumer is created again, instead of waiting
 * out expiry after expiry on a consumer that is gone. (The library's default heartbeat,
 * half the expiry, took 15 s.)
 */
export const PULL = { expires: 10_000, idle_heartbeat: 2_000 } as const;

/** Sleeps that `wake()` ends at once (on stop). */
export class Pause {
  readonly #sleeping = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    return this.until(new Promise((resolve) => (timer = setTimeout(resolve, ms)))).finally(() => clearTimeout(timer));
  }

  /** Resolves when `event` does, or at once on `wake()`. */
  until(event: Promise<void>): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        this.#sleeping.delete(done);
        resolve();
      };
      this.#sleeping.add(done);
      event.then(done, done);
    });
  }

  wake(): void {
    for (const done of [...this.#sleeping]) done();
  }
}

/**
 * Whether the shared connection is up. A request sent while the client is re-establishing
 * the connection can be lost and then costs a whole API timeout, so after a failure the
 * loops wait for the connection before they try again.
 */
export class ConnectionGate {
  #up = true;
  readonly #waiting = new Set<() => void>();
  readonly #reconnects = new Set<() => void>();
  readonly #listeners = new Set<() => void>();
  readonly #stopStatus: () => void;

  constructor(nc: NatsConnection) {
    const status = nc.status();
    // The client's status iterator can be stopped; the type only promises an iterable.
    const stoppable = status as Partial<{ stop(): void }>;
    this.#stopStatus = () => stoppable.stop?.();
    void (async () => {
      for await (const event of status) {
        if (event.type === 'disconnect') this.#up = false;
        else if (event.type === 'reconnect') {
          this.#open();
          for (const resolve of this.#reconnects) resolve();
          this.#reconnects.clear();
          for (const listener of this.#listeners) listener();
        }
      }
    })().catch(() => undefined);
  }

  /** Resolves once the connection is up (at once when it is). */
  up(): Promise<void> {
    if (this.#up) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.add(resolve));
  }

  /** Resolves at the next reconnection, or after `ms` if there is none. */
  nextReconnect(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#reconnects.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#reconnects.add(done);
    });
  }

  /** Calls `listener` after every reconnection; returns what unsubscribes it. */
  onReconnect(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves once the connection is up; rejects when it is still down after `ms`. */
  async upWithin(ms: number): Promise<void> {
    if (!this.#up) await withDeadline(this.up(), ms, () => new Error(`NATS connection still down after ${ms} ms`));
  }

  close(): void {
    this.#stopStatus();
    this.#listeners.clear();
    this.#open();
    for (const resolve of [...this.#reconnects]) resolve();
  }

  #open(): void {
    this.#up = true;
    for (const resolve of this.#waiting) resolve();
    this.#waiting.clear();
  }
}

/** How long a loop told "server shutdown" waits for the reconnection before it tries anyway. */
const SHUTDOWN_WAIT_MS = 10_000;

/**
 * After a failure: back off, then wait for the connection; `pause.wake()` ends both. A
 * server that is shutting down tells its pull requests so before it drops the
 * connection; a request sent in between would be lost (and cost a whole timeout), so
 * then the loop waits for the reconnection itself.
 */
export async function recover(pause: Pause, gate: ConnectionGate, failures: number, error: unknown): Promise<void> {
  if (error instanceof JetStreamError && error.message === 'server shutdown') {
    await pause.until(gate.nextReconnect(SHUTDOWN_WAIT_MS));
  } else {
    await pause.sleep(retryDelayMs(failures));
  }
  await pause.until(gate.up());
}

/**
 * Waits until the server has read what was sent (nak, term and working are
 * fire-and-forget in the protocol), but never longer than the API timeout: a settle
 * during an outage must not hang `stop()`. The ack wait covers a settle that was lost.
 */
export async function confirmSent(nats: Pick<NatsContext, 'nc' | 'timeoutMs'>): Promise<void> {
  await withDeadline(nats.nc.flush(), nats.timeoutMs, () => new Error(`NATS did not confirm within ${nats.timeoutMs} ms`));
}
