/**
 * The requests real clients sent with Engram's MCP server registered as `engram`
 * (test/fixtures/mcp-clients, recorded from Claude Code, Codex, Copilot CLI, opencode
 * and the Agents SDK), replayed through Engram: each is recognised as offering Engram's
 * tools and gets the root memory index in its newest message, and nothing else changes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/mcp-clients');

interface Recorded {
  path: string;
  headers: Record<string, string>;
  body: Record<string, any>;
}

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
}
const test = suite<Context>('recorded clients with the MCP server');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url, { memory: { inject: true } });
  const client = await fetch(`${context.agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${context.agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'REMEMBER: Release notes are drafted in docs/CHANGES.md.' }] }),
  });
  await client.text();
  await context.engram.waitForReflections(context.agent);
});
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

const listOf = (recorded: Recorded, body: any): any[] => (recorded.path.startsWith('/v1/responses') ? body.input : body.messages);

const cases: Array<[file: string, recall: string, deferred: boolean]> = [
  ['claude-code.json', 'mcp__engram__recall', true],
  ['claude-code-tool-search-loaded.json', 'mcp__engram__recall', false],
  ['claude-code-tool-search-off.json', 'mcp__engram__recall', false],
  ['codex.json', 'mcp__engram.recall', false],
  ['copilot-cli.json', 'engram-recall', false],
  ['opencode.json', 'engram_recall', false],
  ['openai-agents-sdk.json', 'recall', false],
];

for (const [file, recall, deferred] of cases) {
  test(`${file}: recognised; the index joins the newest message, the rest is the client's`, async ({ upstream, agent }) => {
    const recorded = JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as Recorded;
    upstream.enqueue({ type: 'text', text: 'Hello.' });
    const response = await fetch(agent.baseUrl + recorded.path, {
      method: 'POST',
      headers: { ...recorded.headers, authorization: `Bearer ${agent.token}`, 'x-engram-conversation': `replay-${file}` },
      body: JSON.stringify(recorded.body),
    });
    assert.is(response.status, 200);
    await response.text();
    const received = upstream.conversationRequests().at(-1)!.json;

    for (const key of Object.keys(recorded.body)) {
      if (listOf(recorded, recorded.body) === recorded.body[key]) continue;
      assert.equal(received[key], recorded.body[key], `${key} is the client's`);
    }
    const sent = listOf(recorded, recorded.body);
    const forwarded = listOf(recorded, received);
    assert.is(forwarded.length, sent.length);
    const changed = forwarded.flatMap((item: unknown, index: number) => (JSON.stringify(item) === JSON.stringify(sent[index]) ? [] : [index]));
    assert.equal(changed, [changed.at(-1)], 'one message carries Engram’s additions');
    const carrier = JSON.stringify(forwarded[changed[0]]);
    assert.match(carrier, '<engram-memory-index>');
    assert.match(carrier, 'docs/CHANGES.md', 'the index lists what the agent knows');
    assert.ok(carrier.includes('`' + recall + '`'), `the guide names ${recall}`);
    assert.is(carrier.includes('deferred'), deferred, 'a deferred tool is to be loaded first');
  });
}

test.run();
