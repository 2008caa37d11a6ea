/**
 * Reads nothing from the environment itself: it takes a Config, connects the adapters
 * it selects, builds the app and listens. `close()` shuts everything down in order.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { UndiciUpstream } from './adapters/upstream/undici-upstream.js';
import { openSqliteAdapters } from './adapters/sqlite/index.js';
import { buildApp, type BuildOptions } from './app.js';
import { ConfigError, type Config } from './config.js';
import type { Deps } from './deps.js';
import { createEmbedder } from './adapters/embeddings/create-embedder.js';
import { loadOrCreateAdminToken, type AdminToken } from './security/admin-token.js';
import { loadOrCreateSecretKey, SecretBox } from './security/secret-box.js';
import { Vault } from './security/vault.js';
import { Control } from './control/control.js';

export const DATABASE_FILE = 'engram.db';

export interface Connected {
  deps: Deps;
  adminToken: AdminToken;
  close(): Promise<void>;
}

/** Opens the adapters the config selects (today: the embedded SQLite default). */
export async function connect(config: Config): Promise<Connected> {
  if (config.natsUrl || config.weaviateUrl) {
    throw new ConfigError(
      'ENGRAM_NATS_URL / ENGRAM_WEAVIATE_URL select the distributed adapters, which this build does not include yet; unset them to run on the embedded store.',
    );
  }
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const adminToken = loadOrCreateAdminToken(config.dataDir, config.adminToken);
  const vault = new Vault(new SecretBox(loadOrCreateSecretKey(config.dataDir, config.secretKey)));
  const sqlite = openSqliteAdapters(path.join(config.dataDir, DATABASE_FILE));
  const { reflections, bus } = sqlite;
  const now = Date.now;
  const control = new Control(sqlite.control, { vault, now });
  const upstream = new UndiciUpstream({ timeoutMs: config.upstreamTimeoutMs });
  const embedder = createEmbedder(config, upstream);
  const deps: Deps = { config, control, reflections, bus, embedder, upstream, adminTokenHash: adminToken.hash, now };
  return {
    deps,
    adminToken,
    async close() {
      await upstream.close();
      await sqlite.close();
    },
  };
}

export interface Running {
  app: FastifyInstance;
  url: string;
  deps: Deps;
  adminToken: AdminToken;
  close(): Promise<void>;
}

export async function start(config: Config, options: BuildOptions = {}): Promise<Running> {
  const connected = await connect(config);
  const app = await buildApp(connected.deps, { logger: { level: config.logLevel }, ...options });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    await connected.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${host}:${port}`,
    deps: connected.deps,
    adminToken: connected.adminToken,
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await connected.close();
      })()),
  };
}
