/**
 * A changed fact end to end (DESIGN section 5), through the proxy with the real SQLite
 * file and real HTTP: a conversation teaches how staging is deployed; a later one says
 * the command changed; the extraction model, shown the old reflection by id, records the
 * new one as superseding it. From then on only the new one is injected and recalled, the
 * old one is history in the API, and restoring it by hand makes it current again. The
 * scripted extractor reads `<existing-reflections>` as a model would. Run on the embedded
 * stores, and with the bus and control store on a real nats-server.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ExtractedReflection, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { natsServerBinary, startNatsServer } from '../support/nats-server.js';

interface Context {
  upstream: ScriptedUpstream;
}
const test = suite<Context>('a changed fact supersedes the old reflection');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
});
test.after(async ({ upstream }) => {
  await upstream.close();
});

const LEGACY = 'Deploy to staging with ./ops/ship-legacy.sh.';
const RUNNER = 'Deploy to staging with ./deploy/run.sh --env staging.';

/** The `[id] (kind) content` lines an extraction request showed, as a model reads them. */
function shownReflections(text: string): Array<{ id: string; kind: string; content: string }> {
  const block = /<existing-reflections>\n([^]*?)\n<\/existing-reflections>/.exec(text)?.[1] ?? '';
  return [...block.matchAll(/^\[(ref_[0-9a-f]+)\] \((factual|procedural)\) (.*)$/gm)].map(([, id, kind, content]) => ({ id, kind, content }));
}

/**
 * The extraction model of this story: it learns the deploy command a user states, and
 * when the command it learns replaces one of the reflections it was shown, it says so.
 */
function deployExtractor(seen: Array<ReturnType<typeof shownReflections>>) {
  return (_request: unknown, text: string): ExtractedReflection[] => {
    const shown = shownReflections(text);
    seen.push(shown);
    const transcript = text.slice(text.lastIndexOf('<transcript>'));
    const learnt = transcript.includes('./deploy/run.sh') ? RUNNER : transcript.includes('ship-legacy.sh') ? LEGACY : undefined;
    if (!learnt) return [];
    const replaced = learnt === RUNNER ? shown.filter((r) => r.content.includes('ship-legacy.sh')).map((r) => r.id) : [];
    return [{ kind: 'procedural', content: learnt, topic: 'deployment', tags: ['staging deploy command'], turn: 0, supersedes: replaced }];
  };
}

async function chat(agent: TestAgent, conversation: string, text: string) {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'x-engram-conversation': conversation },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content: text }] }),
  });
  assert.is(response.status, 200, await response.clone().text());
  await response.text();
  return Number(response.headers.get('x-engram-injected'));
}

async function recalled(agent: TestAgent, query: string): Promise<string[]> {
  const client = new Client({ name: 'supersession', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  try {
    const result = await client.callTool({ name: 'recall', arguments: { query } });
    assert.not.ok(result.isError, JSON.stringify(result));
    return (result.structuredContent as { results: Array<{ id: string }> }).results.map((r) => r.id);
  } finally {
    await client.close();
  }
}

/** The text of the last request the upstream got for a conversation (what the model was sent). */
function lastSent(upstream: ScriptedUpstream): string {
  return JSON.stringify(upstream.conversationRequests().at(-1)!.json.messages.at(-1));
}

async function story(upstream: ScriptedUpstream, engram: TestEngram): Promise<void> {
  const agent = await engram.createAgent(upstream.url);
  const base = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;
  const seen: Array<ReturnType<typeof shownReflections>> = [];
  upstream.setExtractor(deployExtractor(seen));
  const unrelated = await engram.api('POST', `${base}/reflections`, { content: 'The office coffee machine descales itself on Fridays.', kind: 'factual', topic: 'office' });
  assert.is(unrelated.status, 201);

  // Conversation 1 teaches the old command.
  upstream.enqueue({ type: 'text', text: 'Noted: ./ops/ship-legacy.sh for staging.' });
  await chat(agent, 'conv-teach', 'To deploy to staging, run ./ops/ship-legacy.sh from the repository root.');
  const legacy = (await engram.waitForReflections(agent, 2)).find((r: any) => r.content === LEGACY);
  assert.ok(legacy);
  await idle(engram);

  // Conversation 2: the command changed.
  upstream.enqueue({ type: 'text', text: 'Got it, ./deploy/run.sh --env staging from now on.' });
  await chat(agent, 'conv-change', 'Heads up: ship-legacy.sh is gone. The staging deploy is now ./deploy/run.sh --env staging.');
  await eventually(async () => ((await engram.reflections(agent)).some((r) => r.content === RUNNER) ? true : undefined), 10_000, 'the new reflection');
  await idle(engram);
  assert.equal(
    seen.at(-1),
    [{ id: legacy.id, kind: 'procedural', content: LEGACY }],
    'the extraction of conversation 2 showed the old reflection by id, and nothing unrelated',
  );

  const current = await engram.reflections(agent);
  assert.equal(current.map((r: any) => r.content).sort(), [RUNNER, unrelated.json.content].sort(), 'the old one is no longer current');
  const runner = current.find((r: any) => r.content === RUNNER);
  const history = await engram.api('GET', `${base}/reflections?status=superseded`);
  assert.equal(history.json.data.map((r: any) => [r.id, r.superseded_by]), [[legacy.id, runner.id]]);
  assert.ok(history.json.data[0].superseded_at);

  // Conversation 3 asks: the upstream gets the new command, not the old one.
  const injected = await chat(agent, 'conv-ask', 'how do I deploy to staging?');
  const sent = lastSent(upstream);
  assert.ok(injected >= 1, 'something was injected');
  assert.match(sent, '<engram-reflections>');
  assert.match(sent, './deploy/run.sh --env staging');
  assert.not.match(sent, 'ship-legacy', 'the superseded reflection is never injected');
  const found = await recalled(agent, 'how do I deploy to staging?');
  assert.ok(found.includes(runner.id));
  assert.not.ok(found.includes(legacy.id), 'nor recalled');
  await idle(engram);

  // Restored by hand: current, injectable and recalled again.
  const restored = await engram.api('PATCH', `${base}/reflections/${legacy.id}`, { superseded_by: null });
  assert.equal([restored.status, restored.json.superseded_by], [200, null]);
  assert.equal((await engram.api('GET', `${base}/reflections?status=superseded`)).json.data, []);
  await chat(agent, 'conv-ask-again', 'how do I deploy to staging?');
  assert.match(lastSent(upstream), 'ship-legacy', 'injectable again');
  assert.ok((await recalled(agent, 'how do I deploy to staging?')).includes(legacy.id), 'recalled again');
  await idle(engram);
  assert.not.ok(seen.flat().some((r) => r.id === unrelated.json.id), 'an unrelated reflection is never shown to extraction');
}

test('SQLite: the new fact supersedes the old one; only the new one is injected and recalled; the old one is history, restorable', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '50' });
  try {
    await story(upstream, engram);
  } finally {
    await engram.close();
  }
});

if (natsServerBinary()) {
  test('NATS bus and control store: the same story', async ({ upstream }) => {
    const nats = await startNatsServer();
    const engram = await startEngram({ 'settle-ms': '50', 'nats-url': nats.url, 'nats-prefix': 'supersede', 'secret-key': '12'.repeat(32) });
    try {
      await story(upstream, engram);
    } finally {
      await engram.close();
      await nats.cleanup();
    }
  });
}

test.run();
