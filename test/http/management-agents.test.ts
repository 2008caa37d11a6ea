/** Orgs, agents and tokens through the management API, over real HTTP and real SQLite. */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ADMIN, startManagementServer, UPSTREAM_KEY, type ManagementServer } from './management-server.js';

const test = suite<{ server: ManagementServer }>('management orgs, agents, tokens');

test.before(async (context) => {
  context.server = await startManagementServer();
});

test.after(async ({ server }) => server.close());

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

test('POST /v0/orgs creates an org; GET finds it by id and by name', async ({ server }) => {
  const created = await server.call('POST', '/v0/orgs', { body: { name: 'acme' } });
  assert.is(created.status, 201);
  assert.equal(Object.keys(created.json).sort(), ['created_at', 'id', 'name']);
  assert.is(created.json.name, 'acme');
  assert.match(created.json.created_at, ISO);

  assert.equal((await server.call('GET', `/v0/orgs/${created.json.id}`)).json, created.json);
  assert.equal((await server.call('GET', '/v0/orgs/acme')).json, created.json);
  const list = await server.call('GET', '/v0/orgs');
  assert.ok(list.json.data.some((org: any) => org.id === created.json.id));
});

test('a body its documented schema refuses is told the field and what it takes', async ({ server }) => {
  const missing = await server.call('POST', '/v0/orgs', { body: {} });
  assert.equal([missing.status, missing.json.error.param, missing.json.error.message], [400, 'name', '`name` is required']);
  const org = await server.call('POST', '/v0/orgs', { body: { name: 'schema-org' } });
  const unknown = await server.call('POST', `/v0/orgs/${org.json.id}/agents`, {
    body: { name: 'bot', upstream: { base_url: 'http://127.0.0.1:9', baseUrl: 'http://127.0.0.1:9' } },
  });
  assert.is(unknown.status, 400);
  assert.is(unknown.json.error.param, 'upstream.baseUrl');
  assert.is(unknown.json.error.message, 'Unknown field `upstream.baseUrl`; expected one of: base_url, api_key, headers, responses_state');
  const range = await server.call('POST', `/v0/orgs/${org.json.id}/agents`, {
    body: { name: 'bot', upstream: { base_url: 'http://127.0.0.1:9' }, memory: { top_k: 0 } },
  });
  assert.equal([range.status, range.json.error.param], [400, 'memory.top_k']);
  assert.match(range.json.error.message, /^`memory.top_k`: .*>=1/);
});

test('org validation errors use the envelope', async ({ server }) => {
  const duplicate = await server.call('POST', '/v0/orgs', { body: { name: 'acme' } });
  assert.is(duplicate.status, 409);
  assert.is(duplicate.json.error.code, 'conflict');

  const cases: Array<[unknown, string | null]> = [
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: 'a/b' }, 'name'],
    [{ name: 'ok', extra: true }, 'extra'],
    [[], null],
  ];
  for (const [body, param] of cases) {
    const reply = await server.call('POST', '/v0/orgs', { body });
    assert.is(reply.status, 400, JSON.stringify(body));
    assert.is(reply.json.error.code, 'invalid_request');
    assert.is(reply.json.error.type, 'invalid_request_error');
    assert.is(reply.json.error.param, param);
  }
  const badJson = await server.call('POST', '/v0/orgs', { raw: '{"name":' });
  assert.is(badJson.status, 400);
  assert.is(badJson.json.error.code, 'invalid_json');

  const huge = await server.call('POST', '/v0/orgs', { body: { name: 'x'.repeat(2 * 1024 * 1024) } });
  assert.is(huge.status, 413);
  assert.is(huge.json.error.code, 'body_too_large');

  const missing = await server.call('GET', '/v0/orgs/nope');
  assert.is(missing.status, 404);
  assert.is(missing.json.error.code, 'not_found');
});

test('POST agents returns ids, a token and URLs; the upstream key is never echoed', async ({ server }) => {
  const org = (await server.call('GET', '/v0/orgs/acme')).json;
  const created = await server.call('POST', `/v0/orgs/${org.id}/agents`, {
    body: {
      name: 'coder',
      type: 'api_provider',
      upstream: { base_url: 'https://api.anthropic.com/', api_key: UPSTREAM_KEY, headers: { 'X-Title': 'secret-ish-value' } },
    },
  });
  assert.is(created.status, 201);
  const agent = created.json;
  assert.is(agent.org_id, org.id);
  assert.is(agent.name, 'coder');
  assert.is(agent.type, 'api_provider');
  assert.match(agent.token, /^egm_[A-Za-z0-9_-]{43}$/);
  assert.is(agent.base_url, `${server.url}/v0/orgs/${org.id}/agents/${agent.id}`);
  assert.is(agent.mcp_url, `${agent.base_url}/v0/mcp`);
  assert.equal(agent.upstream, { base_url: 'https://api.anthropic.com', api_key_set: true, headers_set: ['X-Title'], responses_state: 'service' });
  assert.equal(agent.memory, { inject: true, extract: true, top_k: 5, token_budget: 800, min_score: 0.2, extraction_model: null, daily_token_budget: null });
  assert.match(agent.created_at, ISO);

  const secrets = await server.deps.control.agentSecrets(agent.id);
  assert.is(secrets?.upstreamApiKey, UPSTREAM_KEY);
  assert.equal(secrets?.upstreamHeaders, { 'X-Title': 'secret-ish-value' });
  // Header values are sealed with the key: neither is anywhere in the database files.
  const files = fs.readdirSync(server.dataDir).filter((name) => name.startsWith('engram.db'));
  assert.ok(files.length > 0);
  for (const name of files) {
    const bytes = fs.readFileSync(path.join(server.dataDir, name)).toString('latin1');
    assert.not.ok(bytes.includes('secret-ish-value'), `header value in clear in ${name}`);
    assert.not.ok(bytes.includes(UPSTREAM_KEY), `upstream key in clear in ${name}`);
  }

  const views = [
    created,
    await server.call('GET', `/v0/orgs/${org.id}/agents/${agent.id}`),
    await server.call('GET', `/v0/orgs/acme/agents/coder`),
    await server.call('GET', `/v0/orgs/${org.id}/agents`),
    await server.call('PATCH', `/v0/orgs/${org.id}/agents/${agent.id}`, { body: { memory: { top_k: 7 } } }),
  ];
  for (const view of views) {
    const text = JSON.stringify(view.json);
    assert.not.ok(text.includes(UPSTREAM_KEY), 'upstream key echoed');
    assert.not.ok(text.includes('secret-ish-value'), 'header value echoed');
    assert.not.ok(text.includes('api_key"'), 'api_key field present');
  }
  const fetched = views[1].json;
  assert.is(fetched.token, undefined, 'the token is shown only on creation');
  assert.is(fetched.base_url, agent.base_url);
  assert.is(fetched.upstream.api_key_set, true);
});

test('agent validation: type, base_url, memory, unknown fields, duplicates', async ({ server }) => {
  const org = (await server.call('GET', '/v0/orgs/acme')).json;
  const upstream = { base_url: 'https://api.openai.com', api_key: 'k' };
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ name: 'x', type: 'mcp_server', upstream }, 'type'],
    [{ name: 'x', upstream: { base_url: 'not a url', api_key: 'k' } }, 'upstream.base_url'],
    [{ name: 'x', upstream: { base_url: 'ftp://files.example', api_key: 'k' } }, 'upstream.base_url'],
    [{ name: 'x', upstream: { base_url: 'https://user:pw@api.example', api_key: 'k' } }, 'upstream.base_url'],
    [{ name: 'x', upstream: { api_key: 'k' } }, 'upstream.base_url'],
    [{ name: 'x' }, 'upstream'],
    [{ name: 'x', upstream: { ...upstream, baseUrl: 'https://a' } }, 'upstream.baseUrl'],
    [{ name: 'x', upstream: { ...upstream, headers: { 'Bad Name': 'v' } } }, 'upstream.headers.Bad Name'],
    [{ name: 'x', upstream: { ...upstream, headers: { Host: 'evil' } } }, 'upstream.headers.Host'],
    [{ name: 'x', upstream, memory: { top_k: 0 } }, 'memory.top_k'],
    [{ name: 'x', upstream, memory: { min_score: 2 } }, 'memory.min_score'],
    [{ name: 'x', upstream, memory: { inject: 'no' } }, 'memory.inject'],
    [{ upstream }, 'name'],
  ];
  for (const [body, param] of cases) {
    const reply = await server.call('POST', `/v0/orgs/${org.id}/agents`, { body });
    assert.is(reply.status, 400, JSON.stringify(body));
    assert.is(reply.json.error.code, 'invalid_request');
    assert.is(reply.json.error.param, param, JSON.stringify(body));
  }
  const duplicate = await server.call('POST', `/v0/orgs/${org.id}/agents`, { body: { name: 'coder', upstream } });
  assert.is(duplicate.status, 409);
  const noOrg = await server.call('POST', '/v0/orgs/nope/agents', { body: { name: 'x', upstream } });
  assert.is(noOrg.status, 404);
});

test('type defaults to api_provider; a pasted /v1 suffix is dropped; memory settings apply', async ({ server }) => {
  const created = await server.call('POST', '/v0/orgs/acme/agents', {
    body: {
      name: 'local',
      upstream: { base_url: 'http://127.0.0.1:11434/v1/', api_key: '' },
      memory: { inject: false, top_k: 3, token_budget: 400, min_score: 0.3, extraction_model: 'gpt-mini', daily_token_budget: 250_000 },
    },
  });
  assert.is(created.status, 201);
  assert.is(created.json.type, 'api_provider');
  assert.equal(created.json.upstream, { base_url: 'http://127.0.0.1:11434', api_key_set: false, headers_set: [], responses_state: 'service' });
  assert.equal(created.json.memory, { inject: false, extract: true, top_k: 3, token_budget: 400, min_score: 0.3, extraction_model: 'gpt-mini', daily_token_budget: 250_000 });
});

test('upstreams at link-local or cloud metadata addresses are refused (SSRF); local model servers are allowed', async ({ server }) => {
  const refused = [
    'http://169.254.169.254/latest',
    'http://[fd00:ec2::254]',
    'http://metadata.google.internal',
    'http://[::ffff:169.254.169.254]',
    'http://2852039166',
    'http://169.254.10.20:8080',
    'http://0.0.0.0:8080',
  ];
  for (const base_url of refused) {
    const reply = await server.call('POST', '/v0/orgs/acme/agents', { body: { name: 'ssrf', upstream: { base_url, api_key: 'k' } } });
    assert.is(reply.status, 400, base_url);
    assert.is(reply.json.error.param, 'upstream.base_url', base_url);
    assert.match(reply.json.error.message, /is refused: /, base_url);
  }
  const agent = await server.createAgent('acme', 'moving');
  const patch = await server.call('PATCH', `/v0/orgs/${agent.org_id}/agents/${agent.id}`, { body: { upstream: { base_url: 'http://169.254.169.254' } } });
  assert.equal([patch.status, patch.json.error.param], [400, 'upstream.base_url']);
  assert.is((await server.call('GET', `/v0/orgs/${agent.org_id}/agents/${agent.id}`)).json.upstream.base_url, agent.upstream.base_url, 'unchanged');
  for (const base_url of ['http://127.0.0.1:11434', 'http://localhost:8000', 'http://10.0.0.5:8080', 'http://192.168.1.20']) {
    const reply = await server.call('POST', '/v0/orgs/acme/agents', { body: { name: `local-${base_url.length}-${base_url.at(-1)}`, upstream: { base_url, api_key: '' } } });
    assert.is(reply.status, 201, base_url);
  }
  const strict = await startManagementServer({ 'upstream-allow-private': 'false' });
  try {
    await strict.call('POST', '/v0/orgs', { body: { name: 'acme' } });
    for (const base_url of ['http://127.0.0.1:11434', 'http://localhost:8000', 'http://10.0.0.5:8080']) {
      const reply = await strict.call('POST', '/v0/orgs/acme/agents', { body: { name: 'local', upstream: { base_url, api_key: '' } } });
      assert.is(reply.status, 400, base_url);
      assert.match(reply.json.error.message, /ENGRAM_UPSTREAM_ALLOW_PRIVATE/);
    }
    const publicOne = await strict.call('POST', '/v0/orgs/acme/agents', { body: { name: 'openai', upstream: { base_url: 'https://api.openai.com', api_key: 'k' } } });
    assert.is(publicOne.status, 201);
  } finally {
    await strict.close();
  }
});

test('PATCH changes name, upstream and memory; the new key is stored, not shown', async ({ server }) => {
  const agent = await server.createAgent('acme', 'patchme');
  const path = `/v0/orgs/${agent.org_id}/agents/${agent.id}`;
  // Opened once (as a proxied request does), so the change below must get past what was opened.
  const before = await server.deps.control.agentSecrets(agent.id);
  assert.ok(before && before.upstreamApiKey !== 'sk-new-key-abcdef');
  assert.ok(Object.isFrozen(before), 'the opened secrets are shared, so nobody may change them');
  const patched = await server.call('PATCH', path, {
    body: {
      name: 'patched',
      upstream: {
        base_url: 'https://openrouter.ai/api',
        api_key: 'sk-new-key-abcdef',
        headers: { 'HTTP-Referer': 'https://me' },
        responses_state: 'upstream',
      },
      memory: { inject: false, extraction_model: null },
    },
  });
  assert.is(patched.status, 200);
  assert.is(patched.json.name, 'patched');
  assert.equal(patched.json.upstream, {
    base_url: 'https://openrouter.ai/api',
    api_key_set: true,
    headers_set: ['HTTP-Referer'],
    responses_state: 'upstream',
  });
  const badState = await server.call('PATCH', path, { body: { upstream: { responses_state: 'both' } } });
  assert.is(badState.status, 400);
  assert.is(badState.json.error.param, 'upstream.responses_state');
  assert.is(patched.json.memory.inject, false);
  assert.is(patched.json.memory.top_k, 5, 'untouched settings stay');
  assert.not.ok(JSON.stringify(patched.json).includes('sk-new-key'));
  assert.is((await server.deps.control.agentSecrets(agent.id))?.upstreamApiKey, 'sk-new-key-abcdef');

  const rename = await server.call('PATCH', path, { body: { name: 'coder' } });
  assert.is(rename.status, 409, 'another agent of the org has that name');
  const badType = await server.call('PATCH', path, { body: { type: 'other' } });
  assert.is(badType.status, 400);
  const missing = await server.call('PATCH', `/v0/orgs/${agent.org_id}/agents/nope`, { body: { name: 'y' } });
  assert.is(missing.status, 404);
});

test('tokens: create shows the secret once, list never, revoke stops it', async ({ server }) => {
  const agent = await server.createAgent('acme', 'tokens');
  const base = `/v0/orgs/${agent.org_id}/agents/${agent.id}`;
  const created = await server.call('POST', `${base}/tokens`, { body: { name: 'ci' } });
  assert.is(created.status, 201);
  assert.equal(Object.keys(created.json).sort(), ['created_at', 'id', 'name', 'prefix', 'token']);
  assert.is(created.json.name, 'ci');
  assert.ok(created.json.token.startsWith(created.json.prefix));
  assert.is((await server.call('GET', base, { token: created.json.token })).status, 200);

  const unnamed = await server.call('POST', `${base}/tokens`);
  assert.is(unnamed.status, 201, 'a body is optional');

  const list = await server.call('GET', `${base}/tokens`);
  assert.is(list.json.data.length, 3);
  assert.not.ok(JSON.stringify(list.json).includes(created.json.token));
  for (const token of list.json.data) {
    assert.equal(Object.keys(token).sort(), ['created_at', 'id', 'last_used_at', 'name', 'prefix', 'revoked_at']);
  }

  const revoked = await server.call('DELETE', `${base}/tokens/${created.json.id}`);
  assert.is(revoked.status, 200);
  assert.is((await server.call('GET', base, { token: created.json.token })).status, 401);
  assert.is((await server.call('GET', base, { token: agent.token })).status, 200, 'other tokens keep working');
  assert.is((await server.call('DELETE', `${base}/tokens/${created.json.id}`)).status, 404);
  const after = await server.call('GET', `${base}/tokens`);
  assert.ok(after.json.data.find((token: any) => token.id === created.json.id).revoked_at);

  const badName = await server.call('POST', `${base}/tokens`, { body: { name: 5 } });
  assert.is(badName.status, 400);
});

test('DELETE agent and DELETE org remove reflections too', async ({ server }) => {
  const one = await server.createAgent('doomed', 'one');
  const two = await server.createAgent('doomed', 'two');
  await server.seed(one.id, [{ kind: 'factual', content: 'one knows things', topic: 't' }]);
  await server.seed(two.id, [{ kind: 'factual', content: 'two knows things', topic: 't' }]);

  const deleted = await server.call('DELETE', `/v0/orgs/doomed/agents/one`);
  assert.equal(deleted.json, { id: one.id, deleted: true });
  assert.is(await server.deps.reflections.count(one.id), 0);
  assert.is((await server.call('GET', `/v0/orgs/doomed/agents/one`)).status, 404);
  assert.is((await server.call('GET', `/v0/orgs/doomed/agents/${two.id}`, { token: one.token })).status, 401);

  const org = await server.call('DELETE', '/v0/orgs/doomed');
  assert.equal(org.json, { id: two.org_id, deleted: true });
  assert.is(await server.deps.reflections.count(two.id), 0);
  assert.is((await server.call('GET', '/v0/orgs/doomed')).status, 404);
  assert.is((await server.call('GET', `/v0/orgs/${two.org_id}/agents/${two.id}`, { token: two.token })).status, 401);
});

test('the public base follows the Host the client used', async ({ server }) => {
  // fetch may not set Host, so node:http carries the request.
  const { port } = new URL(server.url);
  const json = await new Promise<any>((resolve, reject) => {
    const request = http.get(
      { host: '127.0.0.1', port, path: '/v0/orgs/acme/agents/coder', headers: { host: `engram.internal:${port}`, authorization: `Bearer ${ADMIN}` } },
      (response) => {
        let text = '';
        response.on('data', (chunk) => (text += chunk));
        response.on('end', () => resolve(JSON.parse(text)));
      },
    );
    request.on('error', reject);
  });
  assert.ok(json.base_url.startsWith(`http://engram.internal:${port}/v0/orgs/`), json.base_url);
});

test.run();
