/**
 * Secrets from the redaction corpus through the real paths, on a real Engram (SQLite
 * file, HTTP, MCP SDK client) and the scripted upstream: (a) a proxied conversation whose
 * extraction job is built and sent, (b) the MCP `remember` tool, whose writer validates and
 * redacts, (c) an uploaded Claude Code transcript. None of the secrets may reach the
 * extraction request, a stored reflection, or any byte of the database (WAL included).
 * The scripted extraction model echoes every secret back, as a careless model would.
 */
import fs from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import type { ExtractedReflection } from '../support/scripted-upstream/types.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { fixture, upload } from '../support/transcripts.js';
import { SAMPLES, secretParts, type Sample } from '../fixtures/secrets/corpus.js';

/** Old shapes and new: provider prefixes from the ruleset, gitleaks' and Engram's own, context-bound, bare. */
const IDS = [
  'gitlab_pat',
  'slack_app_token',
  'huggingface',
  'twilio_key',
  'azure_storage',
  'dsn_url',
  'secret_key_base',
  'mysql_p',
  'curl_u',
  'prose_password',
  'hex64_bare',
  'aws_secret_bare',
  'github_classic',
  'openai_loose',
  'postgres_url',
  // Shapes only gitleaks' rules or Engram's own know, none of them secretlint's. (With the
  // transcript's own, 20 reflections: one page of the management API's list.)
  'new_relic_user_key_bare',
  'telegram_bot_token',
  'doppler_service_token',
  'postman_api_key',
];
const CHOSEN: Sample[] = IDS.map((id) => {
  const sample = SAMPLES.find((candidate) => candidate.shape.id === id);
  if (!sample) throw new Error(`no corpus shape ${id}`);
  return sample;
});
const PARTS = CHOSEN.flatMap((sample) => secretParts(sample.secret).map((part) => ({ id: sample.shape.id, part })));

/** The ids of the secrets `text` still holds. */
const leaked = (text: string): string[] => [...new Set(PARTS.filter(({ part }) => text.includes(part)).map(({ id }) => id))];

/** One line per secret, as a user pastes them. */
const pasted = CHOSEN.map((sample) => sample.snippet).join('\n');

/** The extraction model echoes every secret it was given into a reflection. */
function echoingExtractor(_request: unknown, transcript: string): ExtractedReflection[] {
  return [
    { kind: 'factual', topic: 'staging', content: `Staging credentials as seen in the transcript: ${transcript.slice(0, 900)}` },
    ...CHOSEN.map((sample) => ({ kind: 'factual' as const, topic: 'staging', content: `For ${sample.shape.id} use ${sample.snippet}` })),
  ];
}

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  /** The last test stops Engram itself, to read the files it leaves. */
  stopped?: boolean;
}
const test = suite<Context>('redaction on every path');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
});
test.before.each(({ upstream }) => {
  upstream.reset();
  upstream.setExtractor(echoingExtractor);
});
test.after(async ({ upstream, engram, stopped }) => {
  if (stopped) fs.rmSync(engram.dataDir, { recursive: true, force: true });
  else await engram.close();
  await upstream.close();
});

/** Every byte under the data directory: the database, its WAL and anything beside them. */
function dataBytes(dir: string): string {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1'));
  }
  return out.join('');
}

async function storedContents(engram: TestEngram, agent: TestAgent, count: number): Promise<string> {
  const stored = await engram.waitForReflections(agent, count);
  return stored.map((reflection) => `${reflection.topic}\n${reflection.content}`).join('\n');
}

function assertExtractionClean(upstream: ScriptedUpstream): void {
  const requests = upstream.extractionRequests();
  assert.ok(requests.length > 0, 'an extraction request was sent');
  for (const request of requests) {
    assert.equal(leaked(request.raw.toString('utf8')), [], 'secrets in the extraction request body');
  }
}

test('(a) a proxied conversation: the extraction request and the reflections hold no secret', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  // The model answers with a tool call whose arguments carry a secret, then repeats one.
  upstream.enqueue({ type: 'tool_call', name: 'bash', arguments: { cmd: `cat > deploy/staging.env <<'EOF'\n${pasted}\nEOF` } });
  upstream.enqueue({ type: 'text', text: `Written. The GitLab token ${CHOSEN[0].secret} is now in deploy/staging.env.` });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` };
  const tools = [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } } }];
  const first = [{ role: 'user', content: `Put these in the staging env file:\n${pasted}` }];
  const one = await fetch(`${agent.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'gpt-test', messages: first, tools }) });
  assert.is(one.status, 200);
  const call = (await one.json()) as any;
  const message = call.choices[0].message;
  const second = [
    ...first,
    message,
    { role: 'tool', tool_call_id: message.tool_calls[0].id, content: `$ cat deploy/staging.env\n${pasted}\n` },
  ];
  const two = await fetch(`${agent.baseUrl}/v1/chat/completions`, { method: 'POST', headers, body: JSON.stringify({ model: 'gpt-test', messages: second, tools }) });
  assert.is(two.status, 200);
  await two.text();

  const stored = await storedContents(engram, agent, CHOSEN.length + 1);
  assert.equal(leaked(stored), [], 'secrets in the stored reflections');
  assert.match(stored, /\[REDACTED:[a-z_]+\]/);
  assertExtractionClean(upstream);
});

test('(b) the MCP remember tool: what the writer stores holds no secret', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }),
  );
  try {
    for (const sample of CHOSEN) {
      const result = await client.callTool({
        name: 'remember',
        arguments: { kind: 'factual', topic: `staging ${sample.shape.id}`, content: `Staging ${sample.shape.id} is set with ${sample.snippet} in deploy/staging.env.` },
      });
      assert.not.ok(result.isError, JSON.stringify(result));
      assert.equal(leaked(JSON.stringify(result)), [], `${sample.shape.id}: the tool's answer echoes the secret`);
    }
  } finally {
    await client.close();
  }
  const stored = await storedContents(engram, agent, CHOSEN.length);
  assert.equal(leaked(stored), [], 'secrets in the stored reflections');
});

test('(c) an uploaded transcript: the extraction request and the reflections hold no secret', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  // The recorded Claude Code session, with the secrets pasted into its first user message.
  const lines = fixture('claude-code/session.jsonl').toString('utf8').split('\n');
  let pastedInto = 0;
  const withSecrets = lines.map((line) => {
    if (line.trim() === '') return line;
    const record = JSON.parse(line);
    if (record.type === 'user' && typeof record.message?.content === 'string' && pastedInto++ === 0) {
      record.message.content += `\nAlso, the staging secrets:\n${pasted}`;
      return JSON.stringify(record);
    }
    return line;
  });
  assert.is(pastedInto > 0, true);
  const answer = await upload(agent, 'transcripts/claude', withSecrets.join('\n'), { 'content-type': 'application/x-ndjson' });
  assert.is(answer.status, 202, JSON.stringify(answer.json));
  const stored = await storedContents(engram, agent, CHOSEN.length + 1);
  assert.equal(leaked(stored), [], 'secrets in the stored reflections');
  assertExtractionClean(upstream);
});

test('no secret in any byte of the database, the WAL included, before and after a checkpoint', async (context) => {
  const { engram } = context;
  // Every job above is done (their reflections were waited for); nothing is queued.
  await eventually(async () => (fs.existsSync(path.join(engram.dataDir, 'engram.db')) ? true : undefined), 2000, 'the database file');
  assert.equal(leaked(dataBytes(engram.dataDir)), [], 'secrets in the data directory while running');
  await engram.running.close();
  context.stopped = true;
  assert.equal(leaked(dataBytes(engram.dataDir)), [], 'secrets in the data directory after close (WAL checkpointed)');
});

test.run();
