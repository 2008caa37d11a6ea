/**
 * One NATS connection per process, shared by the bus and the control stores. It
 * reconnects by itself, forever: a restarted nats-server is picked up without a restart
 * of Engram. While it is away, JetStream calls fail after `timeoutMs` (the request fails
 * cleanly, in the protocol's envelope) instead of hanging.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { StartupError } from '../../errors.js';

export interface NatsLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface NatsOptions {
  url: string;
  /** Shown in the server's connection list (`engram <role> <pid>`). */
  name?: string;
  /** How long a JetStream API call or publish may wait for the server (default 5 s). */
  timeoutMs?: number;
  log?: NatsLog;
}

export interface NatsContext {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The server's version (`2.9.10`), to refuse features it lacks at start-up. */
  serverVersion: string;
  timeoutMs: number;
  close(): Promise<void>;
}

const SILENT: NatsLog = { info() {}, warn() {}, error() {} };

export async function connectNats(options: NatsOptions): Promise<NatsContext> {
  const log = options.log ?? SILENT;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const url = new URL(options.url);
  const where = `${url.hostname}:${url.port || 4222}`;
  const nc = await connect({
    servers: `${url.hostname}:${url.port || 4222}`,
    ...(url.username ? { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } : {}),
    name: options.name ?? `engram ${process.pid}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    timeout: timeoutMs,
    pingInterval: 10_000,
  }).catch((error: unknown) => {
    // The address without credentials: the URL may carry a password.
    throw new StartupError(`Cannot connect to NATS at ${where} (ENGRAM_NATS_URL): ${(error as Error).message}`, { cause: error });
  });
  // Connection events, for the log (never with credentials: only the server's address).
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') log.warn({ server: status.server }, 'NATS connection lost; reconnecting');
      else if (status.type === 'reconnect') log.info({ server: status.server }, 'NATS connection restored');
      else if (status.type === 'error') log.error({ err: status.error }, 'NATS connection error');
    }
  })().catch(() => undefined);
  const jsm = await jetstreamManager(nc, { timeout: timeoutMs });
  const js = jetstream(nc, { timeout: timeoutMs });
  return {
    nc,
    js,
    jsm,
    serverVersion: nc.info?.version ?? 'unknown',
    timeoutMs,
    async close() {
      if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    },
  };
}

/** What `promise` settles to, unless `ms` pass first: then it rejects with `late()`. */
export async function withDeadline<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
