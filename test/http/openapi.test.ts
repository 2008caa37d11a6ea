/**
 * The OpenAPI document is the management API's contract: every route Fastify registers
 * is in it, real answers of a real Engram (SQLite file, HTTP) validate against its
 * schemas, and every call the `engram` CLI makes is one of its operations.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { IncomingMessage } from 'node:http';
import Fastify from 'fastify';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { managementRoutes } from '../../src/http/management.js';
import { COMMANDS, runCli } from '../../src/cli/run.js';
import type { Io } from '../../src/cli/command.js';
import { ADMIN_TOKEN, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Context {
  engram: TestEngram;
  agent: TestAgent;
  doc: any;
  ajv: Ajv2020;
}

const test = suite<Context>('management OpenAPI document');
const DOC_ID = 'https://engram.test/openapi.json';

/** A path template of the document as a regular expression over concrete paths. */
function pattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}

function documented(doc: any, method: string, concretePath: string): string | undefined {
  return Object.keys(doc.paths).find((template) => pattern(template).test(concretePath) && doc.paths[template][method.toLowerCase()]);
}

test.before(async (context) => {
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent('https://api.example.test', { name: 'doc-agent', org: 'doc-org' });
  const response = await fetch(`${context.engram.url}/v0/openapi.json`);
  assert.is(response.status, 200, 'served without a token');
  context.doc = await response.json();
  context.ajv = addFormats(new Ajv2020({ strict: false, validateSchema: false, allErrors: true }));
  context.ajv.addSchema({ ...context.doc, $id: DOC_ID });
});

test.after(async ({ engram }) => engram.close());

/** Validates `body` against the documented answer of `method template` with `status`. */
function check(context: Context, method: string, template: string, status: number, body: unknown, mediaType = 'application/json'): void {
  const operation = context.doc.paths[template]?.[method];
  assert.ok(operation, `${method.toUpperCase()} ${template} is documented`);
  const response = operation.responses[String(status)];
  assert.ok(response, `${method.toUpperCase()} ${template} documents ${status}`);
  const schema = JSON.parse(JSON.stringify(response.content[mediaType].schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`));
  const validate = context.ajv.compile(schema);
  assert.ok(validate(body), `${method.toUpperCase()} ${template} ${status}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
}

/** The documented request body of `method template` accepts `body` (or, with `accepted` false, refuses it). */
function checkRequest(context: Context, method: string, template: string, body: unknown, accepted = true): void {
  const schema = context.doc.paths[template][method].requestBody.content['application/json'].schema;
  const validate = context.ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', `"${DOC_ID}#/components/`)));
  assert.is(validate(body), accepted, `${method.toUpperCase()} ${template} request ${JSON.stringify(body)}: ${JSON.stringify(validate.errors)}`);
}

test('the documented request bodies accept what the server accepts and refuse what it refuses', async (context) => {
  const { engram } = context;
  const A = '/v0/orgs/{org}/agents/{agent}';
  const cases: Array<[string, string, string, unknown]> = [
    ['post', '/v0/orgs', '/v0/orgs', { name: 'req-org' }],
    ['post', '/v0/orgs/{org}/agents', '/v0/orgs/req-org/agents', {
      name: 'req-agent',
      type: 'api_provider',
      upstream: { base_url: 'https://api.example.test', api_key: '', headers: { 'X-A': 'b' }, responses_state: 'service' },
      memory: { inject: true, extract: false, top_k: 100, token_budget: 1, min_score: 1, extraction_model: null },
    }],
    ['patch', A, '/v0/orgs/req-org/agents/req-agent', { name: 'req-agent-2', upstream: { api_key: 'sk-new' }, memory: {} }],
    ['post', `${A}/tokens`, '/v0/orgs/req-org/agents/req-agent-2/tokens', {}],
    ['post', `${A}/reflections`, '/v0/orgs/req-org/agents/req-agent-2/reflections', { content: 'Requests match the documented schemas.', kind: 'factual', topic: 'doc', tags: ['a'] }],
    ['post', '/v0/orgs/{org}/members', '/v0/orgs/req-org/members', { email: 'req-member@example.test' }],
  ];
  for (const [method, template, concrete, body] of cases) {
    checkRequest(context, method, template, body);
    const reply = await engram.api(method.toUpperCase(), concrete, body);
    assert.ok(reply.status < 300, `${method} ${concrete}: ${reply.status} ${JSON.stringify(reply.json)}`);
  }
  const refused: Array<[string, string, string, unknown]> = [
    ['post', '/v0/orgs', '/v0/orgs', { name: 'x', extra: 1 }],
    ['post', '/v0/orgs/{org}/agents', '/v0/orgs/req-org/agents', { name: 'n', upstream: {} }],
    ['patch', A, '/v0/orgs/req-org/agents/req-agent-2', { memory: { top_k: 0 } }],
    ['post', `${A}/reflections`, '/v0/orgs/req-org/agents/req-agent-2/reflections', { content: 'c', kind: 'opinion' }],
    ['patch', `${A}/reflections/{id}`, '/v0/orgs/req-org/agents/req-agent-2/reflections/ref_x', { origin: null }],
    ['patch', `${A}/reflections/{id}`, '/v0/orgs/req-org/agents/req-agent-2/reflections/ref_x', { superseded_by: 'ref_y' }],
    ['post', '/v0/orgs/{org}/members', '/v0/orgs/req-org/members', { email: 'x@example.test', role: 'owner' }],
    ['post', '/v0/orgs/{org}/members', '/v0/orgs/req-org/members', {}],
  ];
  // Restoring is documented (the round trip is in management-reflections.test.ts).
  checkRequest(context, 'patch', `${A}/reflections/{id}`, { superseded_by: null });
  for (const [method, template, concrete, body] of refused) {
    checkRequest(context, method, template, body, false);
    assert.is((await engram.api(method.toUpperCase(), concrete, body)).status, 400, `${method} ${concrete} ${JSON.stringify(body)}`);
  }
});

test('an OpenAPI 3.1 document with the bearer scheme and the error shape', ({ doc }) => {
  assert.is(doc.openapi, '3.1.0');
  assert.equal(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer', description: doc.components.securitySchemes.bearer.description });
  assert.equal(doc.components.schemas.Error.required, ['error']);
  assert.equal(doc.paths['/v0/openapi.json'].get.security, []);
  const post = doc.paths['/v0/orgs/{org}/agents/{agent}/reflections'].post;
  assert.equal(post.security, [{ bearer: [] }]);
  assert.equal(post.parameters.map((p: any) => [p.name, p.in, p.required]), [['org', 'path', true], ['agent', 'path', true]]);
  assert.equal(post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/NewReflection' });
  assert.equal(doc.components.schemas.NewReflection.required, ['content', 'kind']);
  assert.equal(doc.components.schemas.NewReflection.properties.kind.enum, ['factual', 'procedural']);
  // A reflection added by hand may be given a project and an end user; each may be null (everywhere, the agent's own).
  for (const name of ['scope', 'user']) {
    const field = doc.components.schemas.NewReflection.properties[name];
    assert.ok(field, `NewReflection.${name}`);
    assert.equal(field.type, ['string', 'null'], JSON.stringify(field));
    assert.ok(field.description.length > 20);
  }
  for (const status of ['400', '401', '403', '404', '409']) {
    assert.equal(post.responses[status].content['application/json'].schema, { $ref: '#/components/schemas/Error' }, status);
  }
  const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((operation: any) => operation.operationId));
  assert.is(new Set(ids).size, ids.length, 'operation ids are unique');
});

test('every management route Fastify registers is a documented operation, and nothing else is', async ({ engram, doc }) => {
  const routes: Array<{ method: string; url: string }> = [];
  const app = Fastify({ logger: false });
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push({ method: method.toLowerCase(), url: route.url });
  });
  await app.register(managementRoutes, { deps: engram.running.deps });
  await app.ready();
  await app.close();
  assert.ok(routes.length >= 20, `${routes.length} routes`);
  for (const route of routes) {
    const template = route.url.replace(/:(\w+)/g, '{$1}');
    const operation = doc.paths[template]?.[route.method];
    assert.ok(operation, `${route.method.toUpperCase()} ${route.url} is missing from the OpenAPI document`);
    const names = (operation.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
    assert.equal(names, [...route.url.matchAll(/:(\w+)/g)].map(([, name]) => name), `path parameters of ${route.url}`);
  }
  const registered = new Set(routes.map((route) => `${route.method} ${route.url.replace(/:(\w+)/g, '{$1}')}`));
  for (const [template, item] of Object.entries<any>(doc.paths)) {
    for (const method of Object.keys(item)) assert.ok(registered.has(`${method} ${template}`), `${method} ${template} is documented but not served`);
  }
});

test('real answers validate against the documented schemas', async (context) => {
  const { engram, agent } = context;
  const base = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;
  const call = async (method: string, pathname: string, body?: unknown, token?: string) => {
    const reply = await engram.api(method, pathname, body, token);
    return reply;
  };
  const A = '/v0/orgs/{org}/agents/{agent}';

  check(context, 'get', '/v0/orgs', 200, (await call('GET', '/v0/orgs')).json);
  const org = await call('POST', '/v0/orgs', { name: 'doc-org-2' });
  check(context, 'post', '/v0/orgs', 201, org.json);
  check(context, 'get', '/v0/orgs/{org}', 200, (await call('GET', `/v0/orgs/${org.json.id}`)).json);
  const created = await call('POST', `/v0/orgs/${org.json.id}/agents`, {
    name: 'a2',
    type: 'api_provider',
    upstream: { base_url: 'https://api.example.test/v1', api_key: 'sk-x', headers: { 'X-Title': 'doc' }, responses_state: 'upstream' },
    memory: { inject: false, extract: true, top_k: 3, token_budget: 500, min_score: 0.2, extraction_model: 'gpt-small' },
  });
  assert.is(created.status, 201, JSON.stringify(created.json));
  check(context, 'post', '/v0/orgs/{org}/agents', 201, created.json);
  check(context, 'get', '/v0/orgs/{org}/agents', 200, (await call('GET', `/v0/orgs/${org.json.id}/agents`)).json);
  check(context, 'patch', A, 200, (await call('PATCH', `/v0/orgs/${org.json.id}/agents/a2`, { memory: { extraction_model: null } })).json);
  check(context, 'get', A, 200, (await call('GET', base, undefined, agent.token)).json);
  const token = await call('POST', `${base}/tokens`, { name: 'ci' });
  check(context, 'post', `${A}/tokens`, 201, token.json);
  check(context, 'get', `${A}/tokens`, 200, (await call('GET', `${base}/tokens`)).json);
  check(context, 'delete', `${A}/tokens/{tokenId}`, 200, (await call('DELETE', `${base}/tokens/${token.json.id}`)).json);

  const added = await call('POST', `${base}/reflections`, { content: 'The deploy script is tools/deploy.sh', kind: 'factual', topic: 'deploy' });
  check(context, 'post', `${A}/reflections`, 201, added.json);
  check(context, 'get', `${A}/reflections`, 200, (await call('GET', `${base}/reflections`)).json);
  check(context, 'get', `${A}/reflections`, 200, (await call('GET', `${base}/reflections?q=deploy`)).json);
  check(context, 'get', `${A}/reflections/{id}`, 200, (await call('GET', `${base}/reflections/${added.json.id}`)).json);
  check(context, 'patch', `${A}/reflections/{id}`, 200, (await call('PATCH', `${base}/reflections/${added.json.id}`, { topic: 'ops' })).json);
  check(context, 'put', `${A}/reflections/{id}`, 200, (await call('PUT', `${base}/reflections/${added.json.id}`, { content: 'Deploys run tools/deploy.sh', kind: 'procedural', topic: 'ops' })).json);
  const exported = await fetch(`${engram.url}${base}/reflections/export`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  for (const line of (await exported.text()).trim().split('\n')) check(context, 'get', `${A}/reflections/export`, 200, JSON.parse(line), 'application/x-ndjson');
  check(context, 'get', `${A}/reflections/export`, 200, (await call('GET', `${base}/reflections/export?format=json`)).json);
  check(context, 'get', `${A}/index`, 200, (await call('GET', `${base}/index`)).json);
  check(context, 'get', `${A}/jobs`, 200, (await call('GET', `${base}/jobs`)).json);
  check(context, 'get', `${A}/extraction/dead-letters`, 200, (await call('GET', `${base}/extraction/dead-letters`)).json);
  check(context, 'delete', `${A}/reflections`, 200, (await call('DELETE', `${base}/reflections?conversation=conv_x`)).json);
  check(context, 'delete', `${A}/reflections/{id}`, 200, (await call('DELETE', `${base}/reflections/${added.json.id}`)).json);

  // Errors, in the documented envelope, for the statuses documented.
  const invalid = await call('POST', `${base}/reflections`, { content: 'x y', kind: 'opinion' });
  check(context, 'post', `${A}/reflections`, 400, invalid.json);
  check(context, 'post', `${A}/reflections`, 401, (await call('POST', `${base}/reflections`, { content: 'a b', kind: 'factual' }, 'egm_wrong')).json);
  check(context, 'post', `${A}/reflections`, 403, (await call('POST', `${base}/reflections`, { content: 'a b', kind: 'factual' }, agent.token)).json);
  check(context, 'get', `${A}/reflections/{id}`, 404, (await call('GET', `${base}/reflections/ref_nope`)).json);
  check(context, 'post', '/v0/orgs', 409, (await call('POST', '/v0/orgs', { name: 'doc-org-2' })).json);
  check(context, 'post', `${A}/extraction/dead-letters/{id}/retry`, 404, (await call('POST', `${base}/extraction/dead-letters/1/retry`, {})).json);
  // Members: an invitation (201), the same email again while invited (201, a new link), a user with an account (200).
  const M = '/v0/orgs/{org}/members';
  const members = `/v0/orgs/${org.json.id}/members`;
  const invited = await call('POST', members, { email: 'Doc.Invitee@Example.test' });
  assert.is(invited.status, 201, JSON.stringify(invited.json));
  check(context, 'post', M, 201, invited.json);
  const again = await call('POST', members, { email: 'doc.invitee@example.test' });
  assert.is(again.status, 201);
  check(context, 'post', M, 201, again.json);
  assert.is.not(again.json.invite_url, invited.json.invite_url, 'a fresh link');
  await engram.running.deps.accounts.signUp('doc.member@example.test', 'a long enough passphrase');
  const member = await call('POST', members, { email: 'doc.member@example.test' });
  assert.is(member.status, 200, JSON.stringify(member.json));
  check(context, 'post', M, 200, member.json);
  check(context, 'get', M, 200, (await call('GET', members)).json);
  check(context, 'post', M, 400, (await call('POST', members, { email: 'not an email' })).json);
  check(context, 'post', M, 404, (await call('POST', '/v0/orgs/org_missing/members', { email: 'a@example.test' })).json);
  check(context, 'delete', `${M}/{user}`, 200, (await call('DELETE', `${members}/${member.json.user_id}`)).json);
  check(context, 'delete', `${M}/{user}`, 200, (await call('DELETE', `${members}/${encodeURIComponent('doc.invitee@example.test')}`)).json);
  check(context, 'delete', `${M}/{user}`, 404, (await call('DELETE', `${members}/${member.json.user_id}`)).json);
  check(context, 'get', M, 401, (await call('GET', `/v0/orgs/${agent.orgId}/members`, undefined, agent.token)).json);

  check(context, 'delete', A, 200, (await call('DELETE', `/v0/orgs/${org.json.id}/agents/a2`)).json);
  check(context, 'delete', '/v0/orgs/{org}', 200, (await call('DELETE', `/v0/orgs/${org.json.id}`)).json);

  // A schema that disagreed with the answers would fail here: the check itself can fail.
  const validate = context.ajv.compile({ $ref: `${DOC_ID}#/components/schemas/Reflection` });
  assert.not.ok(validate({ ...added.json, kind: 'opinion' }), 'an undocumented kind is refused');
  assert.not.ok(validate({ ...added.json, surprise: 1 }), 'an undocumented field is refused');
});

/**
 * Values for a command's options: enough for it to reach the server. Secrets come from
 * plain flags (the file/env/stdin forms read elsewhere), and 404s are fine: the call was made.
 */
function argsFor(command: (typeof COMMANDS)[number], names: { org: string; agent: string; reflection: string; out: string }): string[] {
  const values: Record<string, string> = {
    org: names.org,
    agent: names.agent,
    name: `cli-${command.path.join('-')}`,
    upstream: 'https://api.example.test',
    'upstream-key': 'sk-cli-test',
    header: 'X-Title: cli',
    kind: 'factual',
    format: 'jsonl',
    limit: '5',
    offset: '0',
    'top-k': '5',
    'token-budget': '100',
    'min-score': '0.25',
    'extraction-model': 'gpt-small',
    'daily-token-budget': '500000',
    'responses-state': 'service',
    content: 'An edited memory about the CLI',
    topic: 'cli',
    tag: 'cli',
    conversation: 'conv_cli',
    status: 'all',
    out: names.out,
  };
  const args: string[] = [];
  for (const [name, option] of Object.entries(command.options ?? {})) {
    if (option.type === 'boolean') {
      if (name === 'yes') args.push('--yes');
      continue;
    }
    if (/-(env|file|stdin)$/.test(name)) continue;
    args.push(`--${name}`, values[name] ?? 'x');
  }
  const positionals: Record<string, string[]> = {
    'org create': ['cli-org-created'],
    'org delete': ['cli-org-created'],
    'org member add': [names.org, 'cli-member@example.test'],
    'org member list': [names.org],
    'org member remove': [names.org, 'cli-member@example.test'],
    'reflections add': ['A memory added by the CLI conformance test'],
    'reflections search': ['deploy'],
    'transcripts upload': ['codex', names.out],
    // Without --write, connect only prints the settings it would write.
    connect: ['codex'],
  };
  const given = positionals[command.path.join(' ')] ?? (command.positionals ? [names.reflection] : []);
  return [...command.path, ...given, ...args];
}

test('every call of every engram client command is a documented operation', async ({ engram, agent, doc }) => {
  const seen: Array<{ method: string; path: string; admin: boolean }> = [];
  const listener = (request: IncomingMessage) => {
    seen.push({ method: request.method ?? '', path: (request.url ?? '').split('?')[0], admin: request.headers.authorization === `Bearer ${ADMIN_TOKEN}` });
  };
  engram.running.app.server.on('request', listener);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-cli-doc-'));
  try {
    const added = await engram.api('POST', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections`, { content: 'The CLI conformance test edits this', kind: 'factual' });
    const names = { org: agent.orgId, agent: agent.agentId, reflection: added.json.id, out: path.join(dir, 'out.jsonl') };
    const remote = COMMANDS.filter((command) => command.remote);
    // Deletions last, so the other commands find what they work on.
    remote.sort((a, b) => Number(a.path.includes('delete')) - Number(b.path.includes('delete')));
    assert.ok(remote.length >= 20, `${remote.length} client commands`);
    const silent: Io = { out: () => undefined, err: () => undefined };
    for (const command of remote) {
      const before = seen.length;
      const code = await runCli([...argsFor(command, names), '--url', engram.url, '--admin-token', ADMIN_TOKEN], silent);
      const calls = seen.slice(before).filter((call) => call.admin);
      assert.ok(calls.length > 0, `engram ${command.path.join(' ')} made no management call (exit ${code})`);
      for (const call of calls) {
        assert.ok(documented(doc, call.method, call.path), `engram ${command.path.join(' ')}: ${call.method} ${call.path} is not a documented operation`);
      }
    }
  } finally {
    engram.running.app.server.off('request', listener);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
