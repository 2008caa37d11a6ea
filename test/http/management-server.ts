/**
 * A management-only Engram for tests: the real SQLite adapters on a temp dir, the real
 * local embedder, `managementRoutes` on a port-0 listener. The proxy and pipeline are
 * left out on purpose, so these tests exercise the management plugin alone; a sibling
 * route checks that the plugin's auth hook stays inside it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { openDatabase } from '../../src/adapters/sqlite/database.js';
import { sqliteControlStores } from '../../src/adapters/sqlite/index.js';
import { Control } from '../../src/control/control.js';
import { Vault } from '../../src/security/vault.js';
import { SqliteReflectionStore } from '../../src/adapters/sqlite/reflection-store.js';
import { loadConfig, type Overrides } from '../../src/config.js';
import type { Deps } from '../../src/deps.js';
import type { Reflection } from '../../src/domain/types.js';
import { managementRoutes } from '../../src/http/management.js';
import { createLocalEmbedder } from '../../src/memory/embedders/local-embedder.js';
import { loadOrCreateSecretKey, SecretBox } from '../../src/security/secret-box.js';
import { hashToken } from '../../src/security/tokens.js';
import { UndiciUpstream } from '../../src/adapters/upstream/undici-upstream.js';
import { upstreamPolicies } from '../../src/security/address-policy.js';

export const ADMIN = 'egm_admin_oxn4m4x08kVo4gh4qq0_JAx37QxmVOYDy231eGSmlk8';
export const UPSTREAM_KEY = 'sk-upstream-very-secret-0123456789';

export interface Reply {
  status: number;
  json: any;
  headers: Headers;
}

export interface ManagementServer {
  url: string;
  dataDir: string;
  deps: Deps;
  call(method: string, pathname: string, options?: { body?: unknown; raw?: string; token?: string | null; headers?: Record<string, string> }): Promise<Reply>;
  /** Creates an org (if needed) and an agent with the admin token; returns the 201 body. */
  createAgent(org: string, name: string, extra?: Record<string, unknown>): Promise<any>;
  seed(agentId: string, items: Array<Pick<Reflection, 'kind' | 'content' | 'topic'> & Partial<Reflection>>): Promise<Reflection[]>;
  close(): Promise<void>;
}

/** Every use of a port the management API must not touch fails loudly. */
function unused<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get(_target, property) {
      throw new Error(`management must not use deps.${name}.${String(property)}`);
    },
  });
}

export async function startManagementServer(settings: Overrides = {}): Promise<ManagementServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-mgmt-'));
  const db = openDatabase(path.join(dataDir, 'engram.db'));
  const control = new Control(sqliteControlStores(db), { vault: new Vault(new SecretBox(loadOrCreateSecretKey(dataDir))), now: Date.now });
  const reflections = new SqliteReflectionStore(db);
  const embedder = createLocalEmbedder();
  const config = loadConfig({ 'data-dir': dataDir, 'admin-token': ADMIN, ...settings }, {});
  // Real, as `main.ts` builds it: `POST /v0/upstream-check` asks the upstream.
  const policies = upstreamPolicies(config);
  const upstream = new UndiciUpstream({ timeoutMs: config.upstreamTimeoutMs, addressPolicy: policies.operator, userAddressPolicy: policies.user });
  const deps: Deps = {
    config,
    control,
    reflections,
    embedder,
    bus: unused('bus'),
    upstream,
    adminTokenHash: hashToken(ADMIN),
    accounts: unused('accounts'),
    vault: unused('vault'),
    publicUrl: () => 'http://127.0.0.1',
    now: Date.now,
  };

  const app = Fastify({ logger: false });
  await app.register(managementRoutes, { deps });
  // A sibling plugin: the management auth hook must not apply here.
  await app.register(async (sibling) => {
    sibling.get('/v0/orgs/:org/agents/:agent/v1/ping', async () => ({ pong: true }));
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

  const call: ManagementServer['call'] = async (method, pathname, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? ADMIN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = options.raw;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(url + pathname, { method, headers, body });
    const text = await response.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = text;
    }
    return { status: response.status, json, headers: response.headers };
  };

  let counter = 0;
  return {
    url,
    dataDir,
    deps,
    call,
    async createAgent(org, name, extra = {}) {
      let found = await call('GET', `/v0/orgs/${encodeURIComponent(org)}`);
      if (found.status === 404) found = await call('POST', '/v0/orgs', { body: { name: org } });
      const created = await call('POST', `/v0/orgs/${found.json.id}/agents`, {
        body: { name, type: 'api_provider', upstream: { base_url: 'https://api.example.test', api_key: UPSTREAM_KEY }, ...extra },
      });
      if (created.status !== 201) throw new Error(`create agent: ${created.status} ${JSON.stringify(created.json)}`);
      return created.json;
    },
    async seed(agentId, items) {
      // Later items are more recent, so a listing (most recent first) reverses them.
      const now = Date.now();
      const vectors = await embedder.embed(items.map((item) => item.content));
      const stored = items.map((item, index) => ({
        id: `rfl_${++counter}`,
        agentId,
        tags: [],
        source: 'conversation' as const,
        createdAt: now - 1000 * (items.length - index),
        updatedAt: now - 1000 * (items.length - index),
        lastUsedAt: null,
        useCount: 0,
        embedderId: embedder.id,
        ...item,
        vector: vectors[index],
      }));
      await reflections.upsert(stored);
      return stored.map(({ vector: _vector, ...reflection }) => reflection);
    },
    async close() {
      await app.close();
      await upstream.close();
      await reflections.close();
      await control.close();
      db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
