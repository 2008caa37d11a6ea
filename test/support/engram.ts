/**
 * A real Engram for tests: the real SQLite file in a temp dir, the real HTTP server on
 * port 0, agents created through the real management API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Overrides } from '../../src/config.js';
import { start, type Running } from '../../src/main.js';
import type { Deps } from '../../src/deps.js';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';

export const ADMIN_TOKEN = 'egm_admin_hf9HJTIwSqmr3lzjuSKuTPE11cRcOuXTcZ62jS1uv-M';

export interface TestAgent {
  orgId: string;
  agentId: string;
  token: string;
  /** `<engram>/v0/orgs/<org>/agents/<agent>` */
  baseUrl: string;
}

export interface TestEngram {
  url: string;
  dataDir: string;
  running: Running;
  createAgent(upstreamUrl: string, options?: { name?: string; org?: string; memory?: Record<string, unknown>; upstreamKey?: string }): Promise<TestAgent>;
  /** The agent's reflections, through the management API. */
  reflections(agent: TestAgent): Promise<any[]>;
  /** Waits until the agent holds at least `count` reflections (extraction runs after the settle time). */
  waitForReflections(agent: TestAgent, count?: number): Promise<any[]>;
  /** Management API call with the admin token (or another token). */
  api(method: string, pathname: string, body?: unknown, token?: string): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

let counter = 0;

/** `log`: where the lines Engram logs (at info) go, for a test that reads them; none are written without it. */
export async function startEngram(overrides: Overrides = {}, dataDir?: string, options: { now?: () => number; log?: string[]; clients?: Deps['clients'] } = {}): Promise<TestEngram> {
  const dir = dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'engram-test-'));
  const config = loadConfig(
    { port: '0', host: '127.0.0.1', 'data-dir': dir, 'admin-token': ADMIN_TOKEN, 'settle-ms': '50', 'log-level': 'warn', ...overrides },
    {},
  );
  const log = options.log;
  const running = await start(config, { logger: log ? { level: 'info', stream: { write: (line) => void log.push(line) } } : false, now: options.now, clients: options.clients });
  const api: TestEngram['api'] = async (method, pathname, body, token = ADMIN_TOKEN) => {
    const response = await fetch(running.url + pathname, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, json: text ? JSON.parse(text) : undefined };
  };
  const reflections: TestEngram['reflections'] = async (agent) => {
    const listed = await api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`);
    if (listed.status !== 200) throw new Error(`reflections: ${listed.status} ${JSON.stringify(listed.json)}`);
    return listed.json.data;
  };
  return {
    url: running.url,
    dataDir: dir,
    running,
    api,
    async createAgent(upstreamUrl, options = {}) {
      const orgName = options.org ?? `org-${process.pid}-${++counter}`;
      let org = await api('GET', `/v0/orgs/${orgName}`);
      if (org.status === 404) org = await api('POST', '/v0/orgs', { name: orgName });
      if (org.status >= 300) throw new Error(`org: ${org.status} ${JSON.stringify(org.json)}`);
      const created = await api('POST', `/v0/orgs/${org.json.id}/agents`, {
        name: options.name ?? `agent-${++counter}`,
        type: 'api_provider',
        upstream: { base_url: upstreamUrl, api_key: options.upstreamKey ?? 'sk-upstream-secret-key-0000000000000000' },
        ...(options.memory ? { memory: options.memory } : {}),
      });
      if (created.status !== 201) throw new Error(`agent: ${created.status} ${JSON.stringify(created.json)}`);
      return { orgId: org.json.id, agentId: created.json.id, token: created.json.token, baseUrl: created.json.base_url };
    },
    reflections,
    async waitForReflections(agent, count = 1) {
      return eventually(async () => {
        const listed = await reflections(agent);
        return listed.length >= count ? listed : undefined;
      }, 10_000, `${count} reflection(s) to be extracted`);
    },
    async close() {
      await running.close();
      if (!dataDir) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `check` returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Waits until the system is idle: no job of `subjects` (the extraction queue unless told)
 * stored, waiting or running, so every call such a job would make has been made and what
 * it learns is learnt. Assert absence ("no extraction call", "nothing stored") after this,
 * never after a fixed sleep a late job would outlast. A turn still under way publishes its
 * job when it ends: read its answer (or wait for its request log entry) first.
 */
export async function idle(engram: TestEngram, subjects: readonly string[] = [EXTRACTION_SUBJECT], timeoutMs = 15_000): Promise<void> {
  const { bus } = engram.running.deps;
  await eventually(
    async () => {
      // In order, one at a time: a job publishes its follow-up (extraction -> tagging) before it is acked.
      for (const subject of subjects) if ((await bus.pending(subject)) > 0) return undefined;
      return true;
    },
    timeoutMs,
    `no ${subjects.join(' or ')} job stored, waiting or running`,
  );
}
