/**
 * A turn is recorded before its answer ends: Engram does not pass on the upstream's
 * `content-length` (the client would then have the whole answer with its last byte, before
 * the turn is recorded), so a Responses record read back the moment `create` returns is
 * always there.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

test('a JSON answer ends only once its turn is recorded: no content-length, read back at once', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram();
  try {
    const agent = await engram.createAgent(upstream.url);
    const raw = await fetch(`${agent.baseUrl}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', input: 'hello' }),
    });
    assert.is(raw.status, 200);
    assert.is(raw.headers.get('content-length'), null);
    assert.is(raw.headers.get('transfer-encoding'), 'chunked');
    await raw.text();

    const sdk = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
    for (let i = 0; i < 25; i++) {
      const created = await sdk.responses.create({ model: 'gpt-test', input: `question ${i}` });
      const read = await fetch(`${agent.baseUrl}/v1/responses/${created.id}`, { headers: { authorization: `Bearer ${agent.token}` } });
      assert.is(read.status, 200, `response ${i} recorded before create returned`);
      await read.text();
    }
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test.run();
