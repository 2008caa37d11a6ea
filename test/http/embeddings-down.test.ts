/**
 * An embeddings endpoint (ENGRAM_EMBEDDINGS_URL) that stops answering takes nothing down:
 * proxied requests still reach the provider and come back (memory search falls back to
 * keywords), and `recall` still finds what its words match. The endpoint is the one
 * stand-in besides the upstream: a scripted `/v1/embeddings` on a real port.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

/** Vectors from letter counts: deterministic, and the same text gives the same vector. */
function vectorOf(text: string): number[] {
  const v = new Array<number>(8).fill(0.01);
  for (const char of text.toLowerCase()) if (char >= 'a' && char <= 'z') v[char.charCodeAt(0) % 8] += 1;
  return v;
}

test('embeddings endpoint down: proxied requests go through, recall falls back to keywords', async () => {
  let up = true;
  const embeddings: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (!up) {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"model is loading"}}');
        return;
      }
      const { input } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ object: 'list', data: input.map((text, index) => ({ object: 'embedding', index, embedding: vectorOf(text) })) }),
      );
    });
  });
  await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
  const embeddingsUrl = `http://127.0.0.1:${(embeddings.address() as AddressInfo).port}`;
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'embeddings-url': embeddingsUrl, 'embeddings-model': 'test-embed' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const client = new Client({ name: 'embeddings-down', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${agent.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
    const remembered = await client.callTool({ name: 'remember', arguments: { content: 'The deploy script lives in tools/deploy.sh', kind: 'factual', topic: 'deploy' } });
    assert.not.ok(remembered.isError, JSON.stringify(remembered));

    up = false;
    upstream.enqueue({ type: 'text', text: 'It is in tools/deploy.sh.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Where is the deploy script?' }] }),
    });
    assert.is(answered.status, 200, 'not the 502 of an unreachable provider: the provider is up');
    assert.is((await answered.json()).choices[0].message.content, 'It is in tools/deploy.sh.');
    assert.is(upstream.conversationRequests().length, 1, 'the provider was called');

    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'deploy script' } });
    assert.not.ok(recalled.isError, JSON.stringify(recalled));
    assert.match(JSON.stringify(recalled.content), 'tools/deploy.sh', 'found by its words');
    await client.close();
  } finally {
    await engram.close();
    await upstream.close();
    await new Promise<void>((resolve) => {
      embeddings.close(() => resolve());
      embeddings.closeAllConnections();
    });
  }
});

test.run();
