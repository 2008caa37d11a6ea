/**
 * Secrets from the redaction corpus through the real paths, on a real Engram (SQLite
 * file, HTTP, MCP SDK client) and the scripted upstream: (a) a proxied conversation whose
 * extraction job is built and sent, (b) the MCP `remember` tool, whose writer validates and
 * redacts, (c) an uploaded Claude Code transcript. None of the secrets may reach the
 * extraction request, a stored reflection, or any stored byte: the database and its WAL,
 * the NATS server's JetStream store when the bus is NATS, the reflections export, and a
 * backup taken with `engram backup`. The whole suite runs twice, on SQLite alone and with
 * a real nats-server as the bus. The scripted extraction model echoes every secret back,
 * as a careless model would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import type { ExtractedReflection } from '../support/scripted-upstream/types.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { natsServerBinary, startNatsServer, type NatsServer } from '../support/nats-server.js';
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
  // Shapes only gitleaks' rules or Engram's own know, none of them secretlint's.
  'new_relic_user_key_bare',
  'telegram_bot_token',
  'doppler_service_token',
  'postman_api_key',
  // Webhook URLs (JSON-escaped ones too), Heroku's HRKU- keys, a PEM body without its
  // BEGIN and END, passwords told far from their word or in JSON inside a JSON string, and
  // tokens of the common vendor shape (issue 31).
  'discord_webhook',
  'discord_webhook_escaped',
  'mattermost_webhook',
  'zapier_webhook',
  'teams_webhook',
  'google_chat_webhook',
  'ifttt_webhook',
  'slack_webhook_escaped',
  'heroku_hrku',
  'pem_body_lines',
  'prose_password_far',
  'json_in_json_password',
  'vendor_token',
  'vendor_token_dash',
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
  /** The bus's server, when the suite runs on NATS. */
  nats?: NatsServer;
  /** The agents the tests made, whose reflections are exported at the end. */
  agents: TestAgent[];
  /** Where the backup goes: outside the data directory, as an operator puts one. */
  backupDir: string;
  /** The last test stops Engram itself, to read the files it leaves. */
  stopped?: boolean;
}

/** Every byte of every file under `dir`: a database and its WAL, a JetStream store, a backup. */
function bytesUnder(dir: string): string {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) out.push(fs.readFileSync(path.join(entry.parentPath, entry.name)).toString('latin1'));
  }
  return out.join('');
}

/** The agent's reflections, all of them (the list's pages hold 20 by default; the suite stores more). */
async function storedContents(engram: TestEngram, agent: TestAgent, count: number): Promise<string> {
  const stored = await eventually(
    async () => {
      const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections?limit=200`);
      if (listed.status !== 200) throw new Error(`reflections: ${listed.status} ${JSON.stringify(listed.json)}`);
      return listed.json.data.length >= count ? (listed.json.data as Array<{ topic: string; content: string }>) : undefined;
    },
    20_000,
    `${count} reflections to be extracted`,
  );
  return stored.map((reflection) => `${reflection.topic}\n${reflection.content}`).join('\n');
}

function assertExtractionClean(upstream: ScriptedUpstream): void {
  const requests = upstream.extractionRequests();
  assert.ok(requests.length > 0, 'an extraction request was sent');
  for (const request of requests) {
    assert.equal(leaked(request.raw.toString('utf8')), [], 'secrets in the extraction request body');
  }
}

function redactionSuite(bus: 'sqlite' | 'nats'): void {
  const test = suite<Context>(`redaction on every path (${bus})`);

  test.before(async (context) => {
    context.agents = [];
    context.backupDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-backup-'));
    context.upstream = await startScriptedUpstream();
    if (bus === 'nats') {
      if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
      context.nats = await startNatsServer();
      context.engram = await startEngram({ 'settle-ms': '50', 'nats-url': context.nats.url, 'nats-prefix': 'redaction', 'secret-key': 'ef'.repeat(32) });
      assert.match(context.engram.running.engines.bus, /^nats /);
    } else {
      context.engram = await startEngram({ 'settle-ms': '50' });
    }
  });
  test.before.each(({ upstream }) => {
    upstream.reset();
    upstream.setExtractor(echoingExtractor);
  });
  test.after(async ({ upstream, engram, nats, backupDir, stopped }) => {
    if (stopped) fs.rmSync(engram.dataDir, { recursive: true, force: true });
    else await engram.close();
    await upstream.close();
    await nats?.cleanup();
    fs.rmSync(backupDir, { recursive: true, force: true });
  });

  test('(a) a proxied conversation: the extraction request and the reflections hold no secret', async ({ engram, upstream, agents }) => {
    const agent = await engram.createAgent(upstream.url);
    agents.push(agent);
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

  test('(b) the MCP remember tool: what the writer stores holds no secret', async ({ engram, upstream, agents }) => {
    const agent = await engram.createAgent(upstream.url);
    agents.push(agent);
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

  test('(c) an uploaded transcript: the extraction request and the reflections hold no secret', async ({ engram, upstream, agents }) => {
    const agent = await engram.createAgent(upstream.url);
    agents.push(agent);
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

  test('no secret in any stored byte: the database, the WAL, the bus, an export, a backup; before and after a checkpoint', async (context) => {
    const { engram, nats, agents, backupDir } = context;
    const stores = () => [engram.dataDir, ...(nats ? [nats.dir] : [])];
    // Every job above is done (their reflections were waited for), and the bus is drained.
    await eventually(async () => (fs.existsSync(path.join(engram.dataDir, 'engram.db')) ? true : undefined), 2000, 'the database file');
    await idle(engram);

    let exported = '';
    for (const agent of agents) {
      const response = await fetch(`${engram.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      assert.is(response.status, 200);
      exported += await response.text();
    }
    assert.ok(exported.split('\n').filter(Boolean).length >= 3 * CHOSEN.length, 'the export holds every reflection');
    assert.equal(leaked(exported), [], 'secrets in the reflections export');

    const backup = await runCli(['backup', path.join(backupDir, 'engram-backup.db'), '--data-dir', engram.dataDir], { env: cleanEnv() });
    assert.is(backup.code, 0, backup.stderr);
    assert.equal(leaked(bytesUnder(backupDir)), [], 'secrets in the backup');

    for (const dir of stores()) assert.equal(leaked(bytesUnder(dir)), [], `secrets under ${dir} while running`);
    await engram.running.close();
    context.stopped = true;
    // nats-server writes what it holds in memory to its store when it stops.
    await nats?.stop();
    for (const dir of stores()) assert.equal(leaked(bytesUnder(dir)), [], `secrets under ${dir} after close (WAL checkpointed, JetStream flushed)`);
  });

  test.run();
}

redactionSuite('sqlite');
redactionSuite('nats');
