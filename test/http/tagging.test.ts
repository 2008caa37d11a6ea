/**
 * Every reflection gets tags, through the proxy: a memory remembered without tags (MCP
 * `remember` through the MCP SDK's client) is not found by a request phrased in other
 * words; once a conversation of the agent settles and is extracted, the tagging job tags
 * it on the agent's upstream (the scripted one), and the same request gets it injected.
 * On the embedded SQLite engines and on a real nats-server. Then what an operator sees of
 * tagging jobs: the jobs listing, the dead letters and the metrics.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { TAGGING_SUBJECT } from '../../src/memory/tagging-job.js';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { natsServerBinary, startNatsServer, type NatsServer } from '../support/nats-server.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

const MEMORY = 'Design tokens come from packages/ui/tokens.json';
const PARAPHRASE = 'Where do I change the brand colour palette?';
/** What the extraction model would write for MEMORY: the words a request for it uses. */
const TAGS = ['brand colours', 'colour palette', 'theme'];

interface Context {
  upstream: ScriptedUpstream;
  nats?: NatsServer;
}
const test = suite<Context>('tagging');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // The tagger writes TAGS for MEMORY, the default tags for anything else.
  context.upstream.setTagger((_request, lines) => lines.map(({ id, content }) => ({ id, tags: content === MEMORY ? TAGS : [content.split(' ')[0].toLowerCase()] })));
});
test.after(async ({ upstream, nats }) => {
  await upstream.close();
  await nats?.cleanup();
});

async function remember(agent: TestAgent, args: Record<string, unknown>): Promise<string> {
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  try {
    const result = await client.callTool({ name: 'remember', arguments: args });
    assert.not.ok(result.isError, JSON.stringify(result));
    return (result.structuredContent as { id: string }).id;
  } finally {
    await client.close();
  }
}

async function chat(agent: TestAgent, content: string, conversation: string) {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', 'x-engram-conversation': conversation },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'system', content: 'You are a coding agent.' }, { role: 'user', content }] }),
  });
  assert.is(response.status, 200);
  await response.text();
  return Number(response.headers.get('x-engram-injected'));
}

const reflectionOf = async (engram: TestEngram, agent: TestAgent, id: string) =>
  (await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections/${id}`)).json;

/** The loop: remembered untagged, not found by a paraphrase; a conversation settles; tagged; found. */
async function taggingLoop(engram: TestEngram, upstream: ScriptedUpstream): Promise<void> {
  const agent = await engram.createAgent(upstream.url);
  const id = await remember(agent, { content: MEMORY, kind: 'factual', topic: 'ui' });
  const stored = await reflectionOf(engram, agent, id);
  assert.equal([stored.tags, stored.tags_by], [[], null], 'remembered without tags');
  const taggingCalls = upstream.taggingRequests().length;

  assert.is(await chat(agent, PARAPHRASE, 'before'), 0, 'not found by words it does not say');
  assert.not.match(JSON.stringify(upstream.conversationRequests().at(-1)!.json), 'tokens.json');

  // A conversation of the agent settles; its extraction queues the tagging job, which tags the memory.
  const extractions = upstream.extractionRequests().length;
  assert.is(await chat(agent, 'REMEMBER: The storybook runs with npm run storybook.', 'teach'), 0);
  await eventually(async () => (upstream.extractionRequests().length > extractions ? true : undefined), 10_000, 'the extraction call');
  await idle(engram, [EXTRACTION_SUBJECT, TAGGING_SUBJECT]);

  const tagged = await reflectionOf(engram, agent, id);
  assert.equal([tagged.tags, tagged.tags_by], [TAGS, 'tagging']);
  const calls = upstream.taggingRequests().slice(taggingCalls);
  assert.is(calls.length, 1, 'one call tagged it (what extraction learnt came with tags)');
  assert.match(calls[0].json.messages[1].content, `[${id}] (factual) ${MEMORY}`);

  assert.ok((await chat(agent, PARAPHRASE, 'after')) >= 1, 'found by its tags');
  assert.match(JSON.stringify(upstream.conversationRequests().at(-1)!.json), /<engram-reflections>[^]*packages\/ui\/tokens\.json/);
}

test('SQLite: a memory remembered without tags is tagged in the background, then found by a paraphrase', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '50', 'tagging-interval-ms': '100' });
  try {
    await taggingLoop(engram, upstream);
  } finally {
    await engram.close();
  }
});

test('NATS: the same on JetStream', async (context) => {
  if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
  context.nats = await startNatsServer();
  const engram = await startEngram({ 'settle-ms': '50', 'tagging-interval-ms': '100', 'nats-url': context.nats.url, 'nats-prefix': 'tagging', 'secret-key': 'cd'.repeat(32) });
  try {
    assert.match(engram.running.engines.bus, /^nats /);
    await taggingLoop(engram, context.upstream);
  } finally {
    await engram.close();
  }
});

const jobsOf = async (engram: TestEngram, agent: TestAgent) => (await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/jobs`)).json;

function cli(engram: TestEngram, agent: TestAgent, ...args: string[]) {
  return runCli([...args, '--org', agent.orgId, '--agent', agent.agentId, '--url', engram.url], { env: cleanEnv({ ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN }) });
}

/** The value of a sample in a scrape, by name and labels. */
async function metric(engram: TestEngram, line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${engram.url}/metrics`)).text();
  const found = text.split('\n').find((sample) => line.test(sample));
  return found === undefined ? undefined : Number(found.split(' ').at(-1));
}

test('a waiting tagging job is listed with its kind, by the API, engram jobs and the queue gauge', async ({ upstream }) => {
  // Jobs are due at the start of the next interval by the wall clock: far from a boundary,
  // the job stays waiting for the whole test instead of running under its assertions.
  const interval = 300_000;
  const left = interval - (Date.now() % interval);
  if (left < 60_000) await new Promise((resolve) => setTimeout(resolve, left + 1_000));
  const engram = await startEngram({ 'settle-ms': '50' });
  try {
    const agent = await engram.createAgent(upstream.url);
    await remember(agent, { content: MEMORY, kind: 'factual' });
    await chat(agent, 'REMEMBER: The storybook runs with npm run storybook.', 'teach');
    const jobs = await eventually(async () => {
      const listed = await jobsOf(engram, agent);
      return listed.queued.some((job: any) => job.kind === 'tagging') && listed.running.length === 0 ? listed : undefined;
    }, 10_000, 'the tagging job to be queued');
    assert.is(jobs.tagging_interval_ms, 300_000);
    const [job] = jobs.queued;
    assert.equal({ ...job, id: '', published_at: '', due_at: '' }, { id: '', kind: 'tagging', conversation_id: null, source: null, model: 'gpt-test', turns: null, published_at: '', due_at: '', attempts: 0, last_error: null });
    assert.is(Date.parse(job.due_at) % 300_000, 0, 'due at the start of the next interval');
    assert.ok(Date.parse(job.due_at) <= Date.now() + 300_000);

    const shown = await cli(engram, agent, 'jobs');
    assert.is(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`queued\\s+${job.id}\\s+tagging\\s+runs in \\d+ (s|min)`));
    assert.match(shown.stdout, /one job \(up to 40\) every 300 s at most \(ENGRAM_TAGGING_INTERVAL_MS\)/);
    const listed = await cli(engram, agent, 'reflections', 'list');
    assert.match(listed.stdout, /Learning: reflections without tags to be tagged in \d+ (s|min)\./);
    assert.not.match(listed.stdout, /conversation queued/, 'a tagging job is not a conversation');
    assert.is(await metric(engram, /^engram_extraction_jobs_queued\{kind="tagging"\}/), 1);
    assert.is(await metric(engram, /^engram_extraction_jobs_queued\{kind="extraction"\}/), 0);
  } finally {
    await engram.close();
  }
});

test('a refused tagging call is a dead letter with its kind and reason, retried like an extraction; calls and tags are counted', async ({ upstream }) => {
  const engram = await startEngram({ 'settle-ms': '50', 'tagging-interval-ms': '100' });
  const tagger = (_request: unknown, lines: Array<{ id: string }>) => lines.map(({ id }) => ({ id, tags: TAGS }));
  try {
    const agent = await engram.createAgent(upstream.url);
    const id = await remember(agent, { content: MEMORY, kind: 'factual' });
    upstream.setTagger(() => ({ type: 'error', status: 400, body: { error: { message: 'tool_choice is not supported by this model', type: 'invalid_request_error' } } }));
    await chat(agent, 'REMEMBER: The storybook runs with npm run storybook.', 'teach');
    const [dead] = await eventually(async () => {
      const { json } = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/extraction/dead-letters`);
      return json.data.length > 0 ? json.data : undefined;
    }, 10_000, 'the dead letter');
    assert.is(dead.kind, 'tagging');
    assert.is(dead.reason, 'upstream answered 400 Bad Request');
    assert.equal([dead.conversation_id, dead.source, dead.turns, dead.attempts], [null, null, null, 1]);
    assert.is((await jobsOf(engram, agent)).dead[0].kind, 'tagging');
    assert.is(await metric(engram, /^engram_extraction_dead_letters\{kind="tagging"\}/), 1);
    assert.is(await metric(engram, /^engram_tagging_calls_total\{outcome="refused"\}/), 1);
    const listed = await cli(engram, agent, 'dead-letters', 'list');
    assert.match(listed.stdout, new RegExp(`${dead.id}\\s.*\\stagging\\s+upstream answered 400`));

    upstream.setTagger(tagger);
    const retried = await cli(engram, agent, 'dead-letters', 'retry', dead.id);
    assert.is(retried.code, 0, retried.stderr);
    await idle(engram, [EXTRACTION_SUBJECT, TAGGING_SUBJECT]);
    assert.is((await reflectionOf(engram, agent, id)).tags_by, 'tagging');
    assert.is(await metric(engram, /^engram_extraction_dead_letters\{kind="tagging"\}/), 0);
    assert.is(await metric(engram, /^engram_tagging_calls_total\{outcome="ok"\}/), 1);
    assert.is(await metric(engram, /^engram_tagged_reflections_total /), 1);
  } finally {
    upstream.setTagger((_request, lines) => lines.map(({ id, content }) => ({ id, tags: content === MEMORY ? TAGS : [content.split(' ')[0].toLowerCase()] })));
    await engram.close();
  }
});

test.run();
