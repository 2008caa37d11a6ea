/**
 * The distributed control plane and bus in one call (DESIGN section 9): one NATS
 * connection shared by the JetStream event bus and the KV control stores. Streams,
 * consumers and buckets are named from `prefix`, so deployments can share a server.
 */
import type { ControlStores, EventBus } from '../../ports/index.js';
import { connectNats, type NatsLog } from './connection.js';
import { openNatsControl } from './control/index.js';
import { NatsEventBus } from './event-bus.js';

export interface NatsAdaptersOptions {
  url: string;
  /** Names of streams (upper case), subjects and buckets start with it (default `engram`). */
  prefix?: string;
  name?: string;
  /** The bus's dedup window for message ids: at least the settle time. */
  dedupWindowMs?: number;
  log?: NatsLog;
  /** The request log's retention (`ENGRAM_REQUEST_LOG_DAYS`). */
  requestLogMs?: number;
}

export interface NatsAdapters {
  bus: EventBus;
  control: ControlStores;
  serverVersion: string;
  /** Stops consumers and watches, then drains the connection. */
  close(): Promise<void>;
}

export async function openNatsAdapters(options: NatsAdaptersOptions): Promise<NatsAdapters> {
  const prefix = options.prefix ?? 'engram';
  const log = options.log;
  const nats = await connectNats({ url: options.url, name: options.name, log });
  try {
    const onError = (what: string) => (error: unknown) => log?.error({ err: error }, `${what} (nats) failed; retrying`);
    const bus = await NatsEventBus.open(nats, {
      stream: `${prefix.toUpperCase().replaceAll('-', '_')}_BUS`,
      subjectPrefix: `${prefix}.bus`,
      dedupWindowMs: options.dedupWindowMs,
      onError: onError('event bus'),
    });
    const control = await openNatsControl(nats, { prefix, requestLogMs: options.requestLogMs, onError: onError('control store') });
    return {
      bus,
      control,
      serverVersion: nats.serverVersion,
      async close() {
        await bus.close();
        await control.close();
        await nats.close();
      },
    };
  } catch (error) {
    await nats.close();
    throw error;
  }
}
