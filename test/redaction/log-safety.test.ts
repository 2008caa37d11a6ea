/** What the request log shows of a URL: credentials in queries and paths never, ids always. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { start } from '../../src/main.js';
import { REDACTED, safeErrorSerializer, safeText, safeUrl } from '../../src/redaction/log-safety.js';
import { EngramError } from '../../src/errors.js';
import OpenAI from 'openai';
import { ADMIN_TOKEN, eventually, startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

const TOKEN = 'egm_Q2hhbmdlVGhpc1Rva2VuQmVmb3JlVXNpbmdJdEluUHJvZA';

test('query values of secret-named parameters are replaced, whatever they look like', () => {
  for (const name of ['token', 'access_token', 'api_key', 'apikey', 'key', 'X-Api-Key', 'client_secret', 'password', 'sig', 'code', 'auth']) {
    assert.is(safeUrl(`/v1/models?${name}=hunter2&limit=5`), `/v1/models?${name}=${REDACTED}&limit=5`, name);
  }
});

test('credential-shaped values are replaced under any name, in queries and in path segments', () => {
  assert.is(safeUrl(`/mcp?t=${TOKEN}`), `/mcp?t=${REDACTED}`);
  assert.is(safeUrl(`/v0/lookup/${TOKEN}/x`), `/v0/lookup/${REDACTED}/x`);
  assert.is(safeUrl('/x?q=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD'), `/x?q=${REDACTED}`);
  assert.is(safeUrl('/x?upstream=ghp_16C7e42F292c6912E7710c838347Ae178B4a'), `/x?upstream=${REDACTED}`);
  assert.is(safeUrl('/x?q=aB3dE5fG7hJ9kL1mN3pQ5rS7tV9wX1yZ'), `/x?q=${REDACTED}`, 'a long random string');
  assert.is(safeUrl(`/x?${TOKEN}`), `/x?${REDACTED}`, 'a bare query');
  assert.is(safeUrl(`/x?q=${encodeURIComponent('Bearer ' + TOKEN)}`), `/x?q=${REDACTED}`, 'percent-encoded');
});

test('ids, UUIDs, words and numbers stay readable', () => {
  const url = '/v0/orgs/org_3fK9aB2cD4eF6gH8/agents/agt_0123456789abcdef/reflections/ref_0123456789abcdef01234567?kind=factual&limit=20&offset=0';
  assert.is(safeUrl(url), url);
  const hook = '/v1/hooks/sessions/0b5e7c3a-93a1-4c1e-9d0f-2f6e8b1a7c44/transcript?format=jsonl';
  assert.is(safeUrl(hook), hook);
  assert.is(safeUrl('/v0/orgs/acme-production-environment-team/agents'), '/v0/orgs/acme-production-environment-team/agents');
  assert.is(safeUrl('/v1/responses'), '/v1/responses');
  assert.is(safeUrl('/x?q=how%20do%20we%20deploy'), '/x?q=how%20do%20we%20deploy');
  assert.is(safeUrl('/x?a&b=&=c'), '/x?a&b=&=c');
});

test('safeText: Engram tokens and known key formats in free text', () => {
  const text = `token ${TOKEN} refused; upstream said sk-ant-api03-${'a'.repeat(40)} is wrong`;
  const safe = safeText(text);
  assert.not.match(safe, /egm_Q2|sk-ant-api03-a/);
  assert.match(safe, /^token \[REDACTED(?::engram_token)?\] refused/);
});

test('safeErrorSerializer: whatever was thrown comes out with its message and code, never [object Object]', () => {
  const engram = safeErrorSerializer(new EngramError('upstream_stream_failed', 'The answer holds no record_tags call'));
  assert.equal([engram.type, engram.code, engram.message], ['EngramError', 'upstream_stream_failed', 'The answer holds no record_tags call']);
  const plain = safeErrorSerializer({ code: 'E_QUOTA', message: `quota for ${TOKEN} spent` });
  assert.equal([plain.type, plain.code], ['object', 'E_QUOTA']);
  assert.match(plain.message, /^quota for \[REDACTED(?::engram_token)?\] spent$/);
  // pino applies the `err` serializer to what a caller already serialized: it must stay the same.
  const wrapped = new Error('outer', { cause: new EngramError('upstream_timeout') });
  const once = safeErrorSerializer(wrapped);
  assert.equal(safeErrorSerializer(once), once);
  assert.is((once.cause as { code: string }).code, 'upstream_timeout');
  assert.is(safeErrorSerializer({ status: 503 }).message, '{"status":503}');
  assert.is(safeErrorSerializer('plain words').message, 'plain words');
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.is(safeErrorSerializer(cyclic).message, '[object Object]', 'a cycle cannot stop the line (and is all it can say)');
});

test('a running Engram logs requests with credentials in their URLs replaced', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-logs-'));
  const lines: string[] = [];
  const config = loadConfig({ port: '0', host: '127.0.0.1', 'data-dir': dir, 'admin-token': ADMIN_TOKEN, 'log-level': 'info' }, {});
  const running = await start(config, { logger: { level: 'info', stream: { write: (line) => void lines.push(line) } } });
  const openAiKey = 'sk-proj-' + 'Zq8'.repeat(16);
  try {
    const calls = [
      `/v0/orgs?token=${ADMIN_TOKEN}`,
      `/v0/orgs?api_key=${encodeURIComponent(openAiKey)}&limit=5`,
      `/v0/orgs/${TOKEN}/agents`,
      `/v1/chat/completions?key=${TOKEN}`,
    ];
    for (const call of calls) await (await fetch(running.url + call, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).arrayBuffer();
    const log = lines.join('');
    assert.match(log, /"url":"\/v0\/orgs\?token=\[REDACTED\]"/, 'the request is logged, its token replaced');
    assert.match(log, /api_key=\[REDACTED\]&limit=5/);
    assert.match(log, /"url":"\/v0\/orgs\/\[REDACTED\]\/agents"/);
    for (const secret of [ADMIN_TOKEN, openAiKey, TOKEN, ADMIN_TOKEN.slice(10), TOKEN.slice(4)]) assert.not.ok(log.includes(secret), secret);
  } finally {
    await running.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an x-engram-conversation value is kept and logged only as its digest: a client may use a secret as its id', async () => {
  const upstream = await startScriptedUpstream();
  const lines: string[] = [];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-conversation-header-'));
  const engram = await startEngram({}, dir, { log: lines });
  const value = 'correct horse battery staple 4411';
  try {
    const agent = await engram.createAgent(upstream.url);
    const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0, defaultHeaders: { 'x-engram-conversation': value } });
    for (const text of ['Hello there.', 'And again.']) {
      upstream.enqueue({ type: 'text', text: 'Hi.' });
      await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: text }] });
    }
    const logged = await eventually(async () => {
      const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests`);
      return listed.json.data.length === 2 ? listed.json.data : undefined;
    }, 5000, 'two request log entries');
    const ids = logged.map((entry: any) => entry.conversation_id);
    assert.is(ids[0], ids[1], 'both turns are one conversation');
    assert.match(ids[0], /^x:[A-Za-z0-9_-]{32}$/);
    await engram.close();
    const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
    const stored = files.map((entry) => fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1')).join('');
    for (const [where, text] of [['the data directory', stored], ['the log', lines.join('')], ['the request log', JSON.stringify(logged)]]) {
      assert.not.ok(text.includes(value), `${where} holds the header's value`);
      assert.not.ok(text.includes('battery staple'), `${where} holds part of it`);
    }
    assert.ok(lines.length > 0, 'lines were logged');
  } finally {
    await engram.close().catch(() => undefined);
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
