/**
 * What a person reading Engram's log finds: one line per proxied request (agent,
 * protocol, model, status, time added, reflections injected) and a line for each step of
 * an extraction (scheduled, started, done, failed with the reason), as JSON for a
 * collector or pretty for a terminal, with credentials kept out in both.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type Overrides } from '../../src/config.js';
import { start, type Running } from '../../src/main.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { ADMIN_TOKEN, eventually } from '../support/engram.js';

interface Logged {
  running: Running;
  lines: string[];
  agent: { orgId: string; agentId: string; token: string; baseUrl: string };
  close(): Promise<void>;
}

/** A real Engram whose log lines are captured, with one agent on `upstream`. */
async function loggedEngram(upstream: ScriptedUpstream, overrides: Overrides): Promise<Logged> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-logs-'));
  const config = loadConfig(
    { port: '0', host: '127.0.0.1', 'data-dir': dir, 'admin-token': ADMIN_TOKEN, 'settle-ms': '20', 'log-level': 'info', ...overrides },
    {},
  );
  const lines: string[] = [];
  const running = await start(config, { logger: { level: 'info', stream: { write: (line) => void lines.push(line) } } });
  const admin = async (pathname: string, body: unknown) => {
    const response = await fetch(running.url + pathname, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return response.json() as Promise<any>;
  };
  const org = await admin('/v0/orgs', { name: `logs-${process.pid}-${Math.random().toString(36).slice(2, 8)}` });
  const created = await admin(`/v0/orgs/${org.id}/agents`, {
    name: 'logged',
    type: 'api_provider',
    upstream: { base_url: upstream.url, api_key: 'sk-upstream-secret-key-0000000000000000' },
  });
  return {
    running,
    lines,
    agent: { orgId: org.id, agentId: created.id, token: created.token, baseUrl: created.base_url },
    async close() {
      await running.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function chat(agent: Logged['agent'], content: string, search = ''): Promise<Response> {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions${search}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content }] }),
  });
  await response.text();
  return response;
}

const records = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, any>);

async function waitForLine(lines: string[], message: string): Promise<Record<string, any>> {
  return eventually(async () => records(lines).find((record) => record.msg === message), 10_000, `a "${message}" line`);
}

test('JSON: a proxied request ends with one line saying who, what, how it went and what Engram added; extraction steps follow', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await loggedEngram(upstream, { 'log-format': 'json' });
  try {
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    assert.is((await chat(engram.agent, 'REMEMBER: Builds run on the blue runner.')).status, 200);
    const finished = await waitForLine(engram.lines, 'proxied request finished');
    assert.is(finished.agentId, engram.agent.agentId);
    assert.is(finished.protocol, 'chat-completions');
    assert.is(finished.model, 'gpt-test');
    assert.is(finished.status, 200);
    assert.is(finished.outcome, 'settled');
    assert.is(finished.injected, 0);
    assert.type(finished.addedMs, 'number');
    assert.ok(finished.reqId, 'the line carries the request id of Fastify\'s own lines');

    const scheduled = await waitForLine(engram.lines, 'extraction scheduled');
    assert.is(scheduled.agentId, engram.agent.agentId);
    const started = await waitForLine(engram.lines, 'extraction started');
    assert.is(started.attempt, 1);
    const done = await waitForLine(engram.lines, 'extraction done');
    assert.is(done.stored, 1);
    assert.not.ok(engram.lines.join('').includes('blue runner'), 'no transcript text in the log');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('JSON: a failed extraction is logged with its reason, and counted as dead or to be retried', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await loggedEngram(upstream, { 'log-format': 'json', 'extraction-max-deliver': '2' });
  try {
    upstream.setExtractor(() => ({ type: 'error', status: 400, body: { error: { message: 'model `gpt-test` does not exist', type: 'invalid_request_error' } } }));
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await chat(engram.agent, 'REMEMBER: The cache lives in /var/cache/app.');
    const dead = await waitForLine(engram.lines, 'extraction failed; dead-lettered');
    assert.is(dead.reason, 'upstream answered 400 Bad Request');
    assert.not.ok(engram.lines.some((line) => line.includes('does not exist')), "the upstream's own words are not copied");
    assert.is(dead.agentId, engram.agent.agentId);

    upstream.setExtractor(() => ({ type: 'error', status: 500 }));
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await chat(engram.agent, 'REMEMBER: Logs rotate daily.');
    const retry = await waitForLine(engram.lines, 'extraction failed; will be retried');
    assert.is(retry.reason, 'upstream answered 500 Internal Server Error');
    assert.is(retry.err.message, retry.reason, 'the error itself, serialized once, not "[object Object]"');
    assert.not.ok(engram.lines.some((line) => line.includes('[object Object]')));
    const last = await waitForLine(engram.lines, 'extraction failed on its last delivery (2); dead-lettered');
    assert.is(last.attempt, 2);

    const metrics = await (await fetch(`${engram.running.url}/metrics`)).text();
    assert.match(metrics, /^engram_extraction_jobs_finished_total\{outcome="dead"\} 2$/m);
    assert.match(metrics, /^engram_extraction_jobs_finished_total\{outcome="retry"\} 1$/m);
    assert.match(metrics, /^engram_extraction_dead_letters\{kind="extraction"\} 2$/m);
    assert.match(metrics, /^engram_extraction_dead_letters\{kind="tagging"\} 0$/m);
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('pretty: readable lines, the same fields, credentials still replaced', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await loggedEngram(upstream, { 'log-format': 'pretty' });
  try {
    upstream.enqueue({ type: 'text', text: 'Hello.' });
    const secret = 'sk-proj-' + 'Zq8'.repeat(16);
    assert.is((await chat(engram.agent, 'Hello there.', `?api_key=${secret}`)).status, 200);
    await eventually(async () => (engram.lines.some((line) => line.includes('proxied request finished')) ? true : undefined));
    const log = engram.lines.join('');
    assert.not.ok(engram.lines.some((line) => line.trimStart().startsWith('{')), 'no JSON lines');
    assert.match(log, /INFO.*proxied request finished/);
    assert.match(log, `"agentId":"${engram.agent.agentId}"`);
    assert.match(log, '"protocol":"chat-completions"');
    assert.match(log, 'api_key=[REDACTED]');
    assert.not.ok(log.includes(secret), 'the key in the URL is not in the log');
    assert.not.ok(log.includes(engram.agent.token), 'nor is the token');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('ENGRAM_LOG_FORMAT takes pretty or json only', () => {
  assert.throws(() => loadConfig({ 'log-format': 'xml' }, {}), /ENGRAM_LOG_FORMAT must be one of pretty, json, got "xml"/);
  assert.is(loadConfig({}, { ENGRAM_LOG_FORMAT: 'json' }).logFormat, 'json');
});

test.run();
