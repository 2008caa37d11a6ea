/**
 * The OpenAI-compatible embedder against a scripted `/v1/embeddings` server on a real
 * port (the provider is external, so it is the one stand-in), through the real upstream
 * client.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UndiciUpstream } from '../../src/adapters/upstream/undici-upstream.js';
import { embeddingsUrl, OpenAiEmbedder } from '../../src/adapters/embeddings/openai-embedder.js';
import { createEmbedder } from '../../src/adapters/embeddings/create-embedder.js';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { loadConfig } from '../../src/config.js';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model: string; input: string[] };
}

async function embeddingsServer(answer: (body: Seen['body']) => { status: number; json: unknown }) {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Seen['body'];
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      const { status, json } = answer(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}

/** Unnormalised 3-d vectors, returned out of order as some servers do. */
const threeD = (body: Seen['body']) => ({
  status: 200,
  json: {
    object: 'list',
    model: body.model,
    data: body.input.map((text, index) => ({ object: 'embedding', index, embedding: [text.length, 0, 2] })).reverse(),
  },
});

test('posts {model, input} to /v1/embeddings and returns unit vectors in input order', async () => {
  const server = await embeddingsServer(threeD);
  const upstream = new UndiciUpstream({ timeoutMs: 5_000 });
  try {
    const embedder = new OpenAiEmbedder({ url: server.url, model: 'text-embedding-3-small', apiKey: 'sk-emb-key', upstream });
    assert.is(embedder.id, 'openai:text-embedding-3-small');
    assert.is(embedder.dimensions, 0);
    const [a, b] = await embedder.embed(['ab', '']);
    assert.is(embedder.dimensions, 3);
    assert.is(server.seen[0].path, '/v1/embeddings');
    assert.is(server.seen[0].headers.authorization, 'Bearer sk-emb-key');
    assert.equal(server.seen[0].body, { model: 'text-embedding-3-small', input: ['ab', ' '] });
    // [2, 0, 2] and [1, 0, 2], normalised.
    assert.ok(Math.abs(a[0] - Math.SQRT1_2) < 1e-6 && Math.abs(a[2] - Math.SQRT1_2) < 1e-6, String(a));
    assert.ok(Math.abs(b[0] - 1 / Math.sqrt(5)) < 1e-6, String(b));
  } finally {
    await upstream.close();
    await server.close();
  }
});

test('splits large inputs into batches', async () => {
  const server = await embeddingsServer(threeD);
  const upstream = new UndiciUpstream({ timeoutMs: 5_000 });
  try {
    const embedder = new OpenAiEmbedder({ url: server.url, model: 'm', upstream, batchSize: 2 });
    const vectors = await embedder.embed(['a', 'bb', 'ccc', 'dddd', 'eeeee']);
    assert.is(vectors.length, 5);
    assert.equal(server.seen.map((s) => s.body.input.length), [2, 2, 1]);
    assert.is(server.seen[0].headers.authorization, undefined);
  } finally {
    await upstream.close();
    await server.close();
  }
});

test('fails clearly on an error status, a wrong count or a dimension change', async () => {
  let mode = 'error';
  const server = await embeddingsServer((body) =>
    mode === 'error'
      ? { status: 401, json: { error: { message: 'Incorrect API key' } } }
      : mode === 'count'
        ? { status: 200, json: { data: [] } }
        : { status: 200, json: { data: body.input.map((_, index) => ({ index, embedding: mode === 'dims' ? [1, 2] : [1, 2, 3] })) } },
  );
  const upstream = new UndiciUpstream({ timeoutMs: 5_000 });
  try {
    const embedder = new OpenAiEmbedder({ url: server.url, model: 'm', upstream, dimensions: 3 });
    const failure = async () => {
      try {
        await embedder.embed(['x']);
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    assert.match(await failure(), /answered 401: .*Incorrect API key/);
    mode = 'count';
    assert.match(await failure(), /0 vectors for 1 texts/);
    mode = 'dims';
    assert.match(await failure(), /expected 3 dimensions, got 2/);
    mode = 'ok';
    assert.is((await embedder.embed(['x']))[0].length, 3);
  } finally {
    await upstream.close();
    await server.close();
  }
});

test('embeddingsUrl accepts a base with or without /v1', () => {
  assert.is(embeddingsUrl('https://api.openai.com'), 'https://api.openai.com/v1/embeddings');
  assert.is(embeddingsUrl('https://api.openai.com/'), 'https://api.openai.com/v1/embeddings');
  assert.is(embeddingsUrl('http://localhost:11434/v1/'), 'http://localhost:11434/v1/embeddings');
});

test('createEmbedder picks the local semantic embedder by default, hashing alone without word vectors, the endpoint when configured', async () => {
  const upstream = new UndiciUpstream({ timeoutMs: 5_000 });
  try {
    assert.is(createEmbedder(loadConfig({}, {}), upstream, loadWordVectors()).id, 'local-semantic-v1-356');
    assert.is(createEmbedder(loadConfig({}, {}), upstream, undefined).id, 'local-hash-v1-256');
    const configured = createEmbedder(
      loadConfig({ 'embeddings-url': 'http://127.0.0.1:1', 'embeddings-model': 'nomic-embed-text' }, {}),
      upstream,
      loadWordVectors(),
    );
    assert.is(configured.id, 'openai:nomic-embed-text');
  } finally {
    await upstream.close();
  }
});

test.run();
