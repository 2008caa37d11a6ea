/**
 * Nothing lost: a settled exchange survives `kill -9` of the server before its
 * extraction ran, and is learnt after the restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, eventually } from '../support/engram.js';

const root = path.resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function serve(dataDir: string, port: number, settleMs: number): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      ENGRAM_DATA_DIR: dataDir,
      ENGRAM_PORT: String(port),
      ENGRAM_HOST: '127.0.0.1',
      ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN,
      ENGRAM_SETTLE_MS: String(settleMs),
      ENGRAM_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

async function ready(url: string) {
  await eventually(async () => {
    try {
      return (await fetch(url, { method: 'HEAD' })).ok ? true : undefined;
    } catch {
      return undefined;
    }
  }, 20_000, 'the server to listen');
}

async function api(url: string, method: string, pathname: string, body?: unknown) {
  const response = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json() as Promise<any>;
}

test('kill -9 after the exchange settled, before extraction: learnt after restart', async () => {
  const upstream = await startScriptedUpstream();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-durable-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  let child = serve(dataDir, port, 3_000);
  try {
    await ready(url);
    const org = await api(url, 'POST', '/v0/orgs', { name: 'durable' });
    const agent = await api(url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-durable-0000000000' },
    });
    upstream.enqueue({ type: 'text', text: 'Understood.' });
    const response = await fetch(`${agent.base_url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
      body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'REMEMBER: Releases are tagged from the main branch only.' }] }),
    });
    assert.is(response.status, 200);
    await response.text();

    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    assert.is(upstream.extractionRequests().length, 0, 'extraction had not run before the crash');

    child = serve(dataDir, port, 3_000);
    await ready(url);
    const learnt = await eventually(async () => {
      const listed = await api(url, 'GET', `/v0/orgs/${org.id}/agents/${agent.id}/reflections`);
      return listed.data?.length > 0 ? listed.data : undefined;
    }, 20_000, 'the reflection after restart');
    assert.ok(learnt.some((r: any) => r.content.includes('main branch')));
  } finally {
    child.kill('SIGKILL');
    await upstream.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
