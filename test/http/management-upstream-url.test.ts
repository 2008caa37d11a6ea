/**
 * Issue 14: `upstream.base_url` is the provider's base, the part Engram appends
 * `/v1/chat/completions` (or `/v1/messages`, `/v1/responses`) to. A pasted endpoint URL is
 * refused at creation and change with the base to use; a trailing `/v1` is dropped, a
 * gateway's own prefix kept. Over the real management API.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startManagementServer, type ManagementServer } from './management-server.js';

const test = suite<{ server: ManagementServer }>('upstream base URL');

test.before(async (context) => {
  context.server = await startManagementServer();
  await context.server.call('POST', '/v0/orgs', { body: { name: 'acme' } });
});
test.after(async ({ server }) => server.close());

const ENDPOINTS: Array<[string, string]> = [
  ['http://127.0.0.1:11434/v1/chat/completions', 'http://127.0.0.1:11434'],
  ['https://api.anthropic.com/v1/messages', 'https://api.anthropic.com'],
  ['https://api.openai.com/v1/responses/', 'https://api.openai.com'],
  ['https://api.openai.com/v1/embeddings', 'https://api.openai.com'],
  ['https://openrouter.ai/api/v1/chat/completions', 'https://openrouter.ai/api'],
  ['http://gateway.internal:8080/chat/completions', 'http://gateway.internal:8080'],
];

test('an endpoint URL is refused at creation with the base to use', async ({ server }) => {
  let n = 0;
  for (const [pasted, base] of ENDPOINTS) {
    const answer = await server.call('POST', '/v0/orgs/acme/agents', { body: { name: `a${++n}`, upstream: { base_url: pasted, api_key: '' } } });
    assert.is(answer.status, 400, pasted);
    assert.is(answer.json.error.param, 'upstream.base_url', pasted);
    assert.ok(answer.json.error.message.includes(`use ${base} `), `${pasted}: ${answer.json.error.message}`);
    assert.match(answer.json.error.message, /not the provider's base/);
  }
});

test('an endpoint URL is refused on change too, and the agent keeps its base', async ({ server }) => {
  const created = await server.createAgent('acme', 'keeps', { upstream: { base_url: 'https://api.openai.com', api_key: '' } });
  const changed = await server.call('PATCH', `/v0/orgs/acme/agents/${created.id}`, { body: { upstream: { base_url: 'https://api.openai.com/v1/chat/completions' } } });
  assert.is(changed.status, 400);
  assert.match(changed.json.error.message, /use https:\/\/api\.openai\.com /);
  const agent = await server.call('GET', `/v0/orgs/acme/agents/${created.id}`);
  assert.is(agent.json.upstream.base_url, 'https://api.openai.com');
});

test('a base with /v1 loses it (Engram appends /v1/...); a gateway prefix stays', async ({ server }) => {
  const cases: Array<[string, string]> = [
    ['https://api.openai.com/v1', 'https://api.openai.com'],
    ['https://openrouter.ai/api/v1/', 'https://openrouter.ai/api'],
    ['https://gateway.example.com/openai', 'https://gateway.example.com/openai'],
  ];
  let n = 0;
  for (const [given, stored] of cases) {
    const answer = await server.call('POST', '/v0/orgs/acme/agents', { body: { name: `b${++n}`, upstream: { base_url: given, api_key: '' } } });
    assert.is(answer.status, 201, `${given}: ${JSON.stringify(answer.json)}`);
    assert.is(answer.json.upstream.base_url, stored, given);
  }
});

test.run();
