/**
 * Issue 14: when an upstream fails, the log says which one (the agent, the host) and
 * never its key. A real Engram whose log is captured (BuildOptions.logger), an agent
 * whose upstream refuses connections, real HTTP clients.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { loadConfig } from '../../src/config.js';
import { start, type Running } from '../../src/main.js';
import { ADMIN_TOKEN, eventually } from '../support/engram.js';

const KEY = 'sk-proj-' + 'Kq7'.repeat(16);

interface Context {
  dir: string;
  running: Running;
  lines: string[];
  upstreamUrl: string;
  agent: { id: string; token: string; base_url: string };
}
const test = suite<Context>('upstream failures in the log');

/** A loopback port nothing listens on: taken, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test.before(async (context) => {
  context.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-upstream-log-'));
  context.lines = [];
  const config = loadConfig({ port: '0', host: '127.0.0.1', 'data-dir': context.dir, 'admin-token': ADMIN_TOKEN, 'log-level': 'info' }, {});
  context.running = await start(config, { logger: { level: 'info', stream: { write: (line: string) => void context.lines.push(line) } } });
  context.upstreamUrl = `http://127.0.0.1:${await closedPort()}`;
  const call = async (pathname: string, body: unknown) => {
    const response = await fetch(context.running.url + pathname, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return (await response.json()) as any;
  };
  const org = await call('/v0/orgs', { name: 'logged' });
  context.agent = await call(`/v0/orgs/${org.id}/agents`, { name: 'down', upstream: { base_url: context.upstreamUrl, api_key: KEY } });
});
test.after(async ({ running, dir }) => {
  await running.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const host = (context: Context) => new URL(context.upstreamUrl).host;

test('a models list that cannot reach the upstream: the error line names the upstream host, not the key', async (context) => {
  const response = await fetch(`${context.agent.base_url}/v1/models`, { headers: { authorization: `Bearer ${context.agent.token}` } });
  assert.is(response.status, 502);
  await response.text();
  const line = await eventually(async () => context.lines.find((text) => text.includes('proxy request failed')), 5_000, 'the error line');
  const logged = JSON.parse(line);
  assert.is(logged.err.code, 'upstream_unreachable');
  assert.ok(logged.err.message.includes(`(upstream ${host(context)})`), line);
  assert.not.ok(context.lines.join('').includes(KEY), 'the key is never logged');
});

test('a chat completion that cannot reach the upstream: the client is told which upstream of which agent; the key is never logged', async (context) => {
  const client = new OpenAI({ baseURL: `${context.agent.base_url}/v1`, apiKey: context.agent.token, maxRetries: 0 });
  const failed = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
  assert.instance(failed, OpenAI.APIError);
  assert.is(failed.status, 502);
  assert.is(failed.error.message, `The upstream provider could not be reached (ECONNREFUSED) (upstream ${host(context)} of agent ${context.agent.id})`);
  // The request's own log lines are written by the time the answer is.
  await eventually(async () => context.lines.find((text) => text.includes('request completed') && text.includes('"statusCode":502')), 5_000, 'the request log');
  assert.not.ok(context.lines.join('').includes(KEY), 'the key is never logged');
});

test.run();
