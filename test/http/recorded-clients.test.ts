/**
 * Requests recorded from the real clients (test/fixtures), replayed through Engram.
 * Claude Code: two turns recorded from the real client (test/fixtures/claude-code), replayed
 * through Engram: its session is recognised, the block lands in the user's turn (not in
 * the system entry Claude Code appends after it), its system prompt and tools stay
 * byte-identical, and turn 2 re-sends turn 1's block unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/claude-code');
const turn = (n: number) => JSON.parse(fs.readFileSync(path.join(FIXTURES, `turn-${n}.json`), 'utf8'));

const test = suite<{ upstream: ScriptedUpstream; engram: TestEngram; agent: TestAgent }>('recorded client requests');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

async function replay({ agent }: { agent: TestAgent }, recorded: any): Promise<Response> {
  const body = JSON.stringify(recorded.body);
  const response = await fetch(agent.baseUrl + recorded.path, {
    method: 'POST',
    headers: { ...recorded.headers, 'content-type': 'application/json', 'x-api-key': 'sk-ant-the-users-own-key', 'x-engram-api-key': agent.token },
    body,
  });
  await response.text();
  return response;
}

const strip = (value: unknown) => JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner));

test('two recorded turns: placement, byte-identical prefix, untouched system prompt and tools', async (context) => {
  const { upstream, engram, agent } = context;
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  const teach = await fetch(`${agent.baseUrl}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-engram-api-key': agent.token, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'REMEMBER: The payments service config lives in config/payments.yaml.\nREMEMBER: Payments logs are shipped to logs.internal/payments.' }] }),
  });
  await teach.text();
  await eventually(async () => ((await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`)).json.data.length >= 2 ? true : undefined));

  const first = turn(1);
  const second = turn(2);
  // The answer turn 2 holds: Claude Code sends back what Engram relayed, and that answer names the conversation.
  upstream.enqueue({ type: 'text', text: 'The answer is 42. ' });
  const r1 = await replay(context, first);
  assert.is(r1.status, 200);
  assert.ok(Number(r1.headers.get('x-engram-injected')) >= 1);
  const f1 = upstream.conversationRequests().at(-1)!;

  assert.is(f1.path, first.path);
  assert.is(f1.headers['x-claude-code-session-id'], first.headers['x-claude-code-session-id']);
  assert.ok(f1.raw.includes(JSON.stringify(first.body.system)), 'system prompt byte-identical');
  assert.ok(f1.raw.includes(JSON.stringify(first.body.tools)), 'tools byte-identical');
  const [user, systemEntry] = f1.json.messages;
  assert.equal(systemEntry, first.body.messages[1], 'the trailing system entry is untouched');
  assert.equal(user.content.slice(0, -1), first.body.messages[0].content, "the user's own blocks are untouched");
  assert.match(user.content.at(-1).text, /^<engram-reflections>[^]*payments\.yaml[^]*<\/engram-reflections>$/);

  upstream.enqueue({ type: 'text', text: 'At logs.internal/payments.' });
  const r2 = await replay(context, second);
  assert.is(r2.status, 200);
  const f2 = upstream.conversationRequests().at(-1)!;
  assert.is(strip(f2.json.messages[0]), strip(f1.json.messages[0]), "turn 1's user message and block reappear unchanged");
  // Claude Code itself re-encodes its trailing system entry between turns; Engram passes it on as sent.
  assert.equal(f2.json.messages[1], second.body.messages[1]);
  assert.equal(f2.json.messages[2], second.body.messages[2]);
  assert.ok(f2.raw.includes(JSON.stringify(second.body.tools)), 'tools byte-identical on turn 2');
  const blocks = JSON.stringify(f2.json.messages).match(/<engram-reflections>/g) ?? [];
  assert.ok(blocks.length >= 1);
  assert.not.ok(JSON.stringify(f2.headers).includes('sk-ant-the-users-own-key'), "the user's own key never goes upstream");
});

test('Copilot CLI: a recorded chat-completions request gets the block in its user message, stream and tools untouched', async (context) => {
  const { upstream, agent } = context;
  // The payments memory was taught in the test above (same agent).
  const recorded = JSON.parse(fs.readFileSync(path.resolve(FIXTURES, '../copilot-cli/turn-1.json'), 'utf8'));
  upstream.enqueue({ type: 'text', text: 'In config/payments.yaml.' });
  const response = await fetch(agent.baseUrl + recorded.path, {
    method: 'POST',
    headers: { ...recorded.headers, 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify(recorded.body),
  });
  assert.is(response.status, 200);
  assert.match(await response.text(), /data: \[DONE\]/, 'streamed as requested');
  assert.ok(Number(response.headers.get('x-engram-injected')) >= 1);
  const forwarded = upstream.conversationRequests().at(-1)!;
  assert.ok(forwarded.raw.includes(JSON.stringify(recorded.body.tools)), 'tools byte-identical');
  assert.equal(forwarded.json.messages[0], recorded.body.messages[0], 'system message untouched');
  const user = forwarded.json.messages[1];
  assert.ok(user.content.startsWith(recorded.body.messages[1].content), "the user's text comes first, unchanged");
  assert.match(user.content, /\n\n<engram-reflections>[^]*payments\.yaml[^]*<\/engram-reflections>$/);
});

test.run();
