/**
 * A client that leaves while its request's memories are being found takes that work with
 * it: the query's embedding request (to ENGRAM_EMBEDDINGS_URL) is closed, nothing goes
 * upstream, the request log says `aborted`, and no reflection is counted as used for a
 * request that never sent it. The same holds for an MCP `recall` whose client goes and
 * for a reflection search (`?q=`) whose asker goes. The embeddings endpoint is a scripted
 * `/v1/embeddings` on a real port, as in `embeddings-down.test.ts`; the rest is the real
 * proxy, MCP server and management API over real HTTP.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { ADMIN_TOKEN, eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

/** Vectors from letter counts: deterministic, and the same text gives the same vector. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(8).fill(0.01);
  for (const char of text.toLowerCase()) if (char >= 'a' && char <= 'z') v[char.charCodeAt(0) % 8] += 1;
  return v;
}

const MEMORY = 'The deploy script lives in tools/deploy.sh';
const QUESTION = 'Where does the deploy script live?';

/** An embeddings endpoint that answers, or, once `hold` is set, takes requests and never answers them. */
async function embeddingsEndpoint() {
  const held: Array<{ closed: Promise<void> }> = [];
  let hold = false;
  const answer = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const { input } = JSON.parse(body.toString('utf8')) as { input: string[] };
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({ object: 'list', data: input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })) }),
    );
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (!hold) return answer(req, res, Buffer.concat(chunks));
      // Held: what the test watches is whether Engram closes the connection.
      held.push({ closed: new Promise((resolve) => req.socket.once('close', () => resolve())) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    held,
    hold(on: boolean) {
      hold = on;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function remember(agent: TestAgent, content: string): Promise<void> {
  const client = new Client({ name: 'injection-abort', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  try {
    const remembered = await client.callTool({ name: 'remember', arguments: { content, kind: 'factual', topic: 'deploy' } });
    assert.not.ok(remembered.isError, JSON.stringify(remembered));
  } finally {
    await client.close();
  }
}

const ask = (agent: TestAgent, signal?: AbortSignal) =>
  fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: QUESTION }] }),
    signal,
  });

/** Whether `closed` settles within `ms`. */
const closedWithin = (closed: Promise<void>, ms: number) =>
  Promise.race([closed.then(() => true), new Promise<false>((resolve) => setTimeout(resolve, ms, false).unref())]);

/** The agent's request log, once it holds `count` entries (each is written once its turn has ended). */
const logOf = (engram: TestEngram, agent: TestAgent, count: number) =>
  eventually(async () => {
    const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests`);
    return listed.json.data.length >= count ? (listed.json.data as any[]) : undefined;
  }, 10_000, `${count} request log entries`);

test('a client leaving during injection: the embedding request is closed, nothing goes upstream, logged aborted, nothing marked used', async () => {
  const embeddings = await embeddingsEndpoint();
  const upstream = await startScriptedUpstream();
  // The embedder's own time limit is far beyond the test's waits: only the abort can close the request in time.
  const engram = await startEngram({ 'embeddings-url': embeddings.url, 'embeddings-model': 'test-embed', 'upstream-timeout-ms': '120000' });
  try {
    // Any cosine is relevant: were the abort taken for an embedder failure, the keyword search alone would take the reflection.
    const agent = await engram.createAgent(upstream.url, { memory: { min_score: 0 } });
    await remember(agent, MEMORY);

    embeddings.hold(true);
    const leaving = new AbortController();
    const asked = ask(agent, leaving.signal).then(
      () => undefined,
      (error: Error) => error,
    );
    const [held] = await eventually(async () => (embeddings.held.length > 0 ? embeddings.held : undefined), 10_000, 'the query to be embedded');
    leaving.abort();
    assert.is((await asked)?.name, 'AbortError', 'the client left before any answer');
    assert.ok(await closedWithin(held.closed, 5_000), 'Engram closed the embedding request when the client left');

    const [entry] = await logOf(engram, agent, 1);
    assert.is(entry.outcome, 'aborted');
    assert.is(entry.status, null, 'nothing was answered');
    assert.equal(entry.injected, []);
    assert.is(upstream.conversationRequests().length, 0, 'nothing went upstream');
    assert.is(embeddings.held.length, 1, 'one embedding was asked for, and closed');
    // Idle: the turn has ended, its embedding is closed and no job is waiting.
    assert.is(await engram.running.deps.bus.pending(EXTRACTION_SUBJECT), 0);
    const [stored] = await engram.reflections(agent);
    assert.is(stored.use_count, 0, 'not used by a request that never went out');

    // The same question, asked by a client that stays, injects the reflection and counts its use.
    embeddings.hold(false);
    upstream.enqueue({ type: 'text', text: 'In tools/deploy.sh.' });
    const answered = await ask(agent);
    assert.is(answered.status, 200);
    assert.is(answered.headers.get('x-engram-injected'), '1', 'the reflection is the one this question finds');
    await answered.text();
    await eventually(async () => ((await engram.reflections(agent))[0].use_count === 1 ? true : undefined), 10_000, 'the use counted');
  } finally {
    await engram.close();
    await upstream.close();
    await embeddings.close();
  }
});

/** An MCP client of `agent` over the real Streamable HTTP transport. */
async function mcpClient(agent: TestAgent): Promise<Client> {
  const client = new Client({ name: 'injection-abort', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  return client;
}

test('an MCP client leaving during recall: the embedding request is closed, nothing marked used', async () => {
  const embeddings = await embeddingsEndpoint();
  const upstream = await startScriptedUpstream();
  const log: string[] = [];
  const engram = await startEngram({ 'embeddings-url': embeddings.url, 'embeddings-model': 'test-embed' }, undefined, { log });
  try {
    const agent = await engram.createAgent(upstream.url, { memory: { min_score: 0 } });
    await remember(agent, MEMORY);

    embeddings.hold(true);
    const leaving = await mcpClient(agent);
    const recalling = leaving.callTool({ name: 'recall', arguments: { query: QUESTION } }).then(
      () => undefined,
      (error: Error) => error,
    );
    const [held] = await eventually(async () => (embeddings.held.length > 0 ? embeddings.held : undefined), 10_000, 'the query to be embedded');
    // Closing its transport ends the call's HTTP request: the stateless server's tool handler sees its signal abort.
    await leaving.close();
    assert.ok(await recalling, 'the call did not complete');
    assert.ok(await closedWithin(held.closed, 5_000), 'Engram closed the embedding request when the client left');
    assert.is(embeddings.held.length, 1);
    assert.is((await engram.reflections(agent))[0].use_count, 0, 'not used by a call that has gone');
    assert.equal(log.filter((line) => JSON.parse(line).level >= 50), [], 'a client leaving is not an error');

    // Asked by a client that stays: found, and its use counted.
    embeddings.hold(false);
    const staying = await mcpClient(agent);
    try {
      const found = await staying.callTool({ name: 'recall', arguments: { query: QUESTION } });
      assert.not.ok(found.isError, JSON.stringify(found));
      assert.match(JSON.stringify(found.structuredContent), 'tools/deploy.sh');
    } finally {
      await staying.close();
    }
    assert.is((await engram.reflections(agent))[0].use_count, 1);
  } finally {
    await engram.close();
    await upstream.close();
    await embeddings.close();
  }
});

test('a person leaving a reflection search (?q=): the embedding request is closed', async () => {
  const embeddings = await embeddingsEndpoint();
  const upstream = await startScriptedUpstream();
  const log: string[] = [];
  const engram = await startEngram({ 'embeddings-url': embeddings.url, 'embeddings-model': 'test-embed' }, undefined, { log });
  try {
    const agent = await engram.createAgent(upstream.url);
    await remember(agent, MEMORY);
    const search = (signal?: AbortSignal) =>
      fetch(`${engram.url}/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections?q=${encodeURIComponent(QUESTION)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, signal });

    embeddings.hold(true);
    const leaving = new AbortController();
    const searching = search(leaving.signal).then(
      () => undefined,
      (error: Error) => error,
    );
    const [held] = await eventually(async () => (embeddings.held.length > 0 ? embeddings.held : undefined), 10_000, 'the query to be embedded');
    leaving.abort();
    assert.is((await searching)?.name, 'AbortError');
    assert.ok(await closedWithin(held.closed, 5_000), 'Engram closed the embedding request when the person left');
    assert.equal(log.filter((line) => JSON.parse(line).level >= 50), [], 'a person leaving is not an error');

    embeddings.hold(false);
    const found = await search();
    assert.is(found.status, 200);
    assert.match(JSON.stringify(await found.json()), 'tools/deploy.sh');
  } finally {
    await engram.close();
    await upstream.close();
    await embeddings.close();
  }
});

test('a client leaving while the upstream has not answered: the reflection was found and placed, but counts as used only once the upstream answers it', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'upstream-timeout-ms': '120000' });
  try {
    const agent = await engram.createAgent(upstream.url, { memory: { min_score: 0 } });
    await remember(agent, MEMORY);

    upstream.enqueue({ type: 'hang' });
    const leaving = new AbortController();
    const asked = ask(agent, leaving.signal).then(
      () => undefined,
      (error: Error) => error,
    );
    // The request reached the upstream with the reflection in it: injection was done.
    await eventually(async () => (upstream.conversationRequests().length > 0 ? true : undefined), 10_000, 'the request upstream');
    leaving.abort();
    assert.is((await asked)?.name, 'AbortError');
    const [entry] = await logOf(engram, agent, 1);
    assert.is(entry.outcome, 'aborted');
    assert.is(entry.status, null, 'the upstream never answered');
    // Idle: the turn has ended and logged, and no job is waiting.
    assert.is(await engram.running.deps.bus.pending(EXTRACTION_SUBJECT), 0);
    assert.is((await engram.reflections(agent))[0].use_count, 0, 'not used: no answer came from a request the client left');

    upstream.enqueue({ type: 'text', text: 'In tools/deploy.sh.' });
    const answered = await ask(agent);
    assert.is(answered.headers.get('x-engram-injected'), '1');
    await answered.text();
    await eventually(async () => ((await engram.reflections(agent))[0].use_count === 1 ? true : undefined), 10_000, 'the use counted');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test.run();
