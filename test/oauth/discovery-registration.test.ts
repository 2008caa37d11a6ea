/**
 * How an MCP client finds and joins Engram's authorization server: the 401 challenge of
 * `/v0/mcp`, the protected resource metadata (RFC 9728) at its path and at the root, the
 * authorization server metadata (RFC 8414), CORS for browser-based clients, and dynamic
 * client registration (RFC 7591) for public clients with https or loopback redirect URIs.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { mcpCall, post } from './support.js';

const test = suite<{ engram: TestEngram }>('OAuth discovery and client registration');

test.before(async (context) => {
  context.engram = await startEngram();
});

test.after(async ({ engram }) => {
  await engram?.close();
});

async function getJson(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, json: await response.json() };
}

test('/v0/mcp without a token answers 401 naming its resource metadata, which names Engram as the authorization server', async ({ engram }) => {
  const refused = await mcpCall(engram, undefined, 'initialize');
  assert.is(refused.status, 401);
  const challenge = refused.headers.get('www-authenticate')!;
  const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
  assert.is(metadataUrl, `${engram.url}/.well-known/oauth-protected-resource/v0/mcp`);
  assert.equal(refused.json.error.code, -32001);

  for (const url of [metadataUrl!, `${engram.url}/.well-known/oauth-protected-resource`]) {
    const resource = await getJson(url);
    assert.is(resource.status, 200, url);
    assert.equal(resource.json, {
      resource: `${engram.url}/v0/mcp`,
      authorization_servers: [engram.url],
      bearer_methods_supported: ['header'],
      scopes_supported: ['memory'],
      resource_name: 'Engram memory',
    });
  }

  const server = await getJson(`${engram.url}/.well-known/oauth-authorization-server`);
  assert.is(server.status, 200);
  assert.is(server.json.issuer, engram.url);
  assert.is(server.json.authorization_endpoint, `${engram.url}/oauth/authorize`);
  assert.is(server.json.token_endpoint, `${engram.url}/oauth/token`);
  assert.is(server.json.registration_endpoint, `${engram.url}/oauth/register`);
  assert.is(server.json.revocation_endpoint, `${engram.url}/oauth/revoke`);
  assert.equal(server.json.response_types_supported, ['code']);
  assert.equal(server.json.grant_types_supported, ['authorization_code', 'refresh_token']);
  assert.equal(server.json.code_challenge_methods_supported, ['S256']);
  assert.equal(server.json.token_endpoint_auth_methods_supported, ['none']);
  assert.is(server.json.authorization_response_iss_parameter_supported, true);
});

test('browser-based clients may call the metadata, registration, token and MCP endpoints from any origin, without cookies', async ({ engram }) => {
  const metadata = await fetch(`${engram.url}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://inspector.example' } });
  assert.is(metadata.headers.get('access-control-allow-origin'), '*');
  assert.is(metadata.headers.get('set-cookie'), null);
  for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke', '/v0/mcp']) {
    const preflight = await fetch(engram.url + path, {
      method: 'OPTIONS',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    assert.is(preflight.status, 204, path);
    assert.is(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-headers')!, 'authorization');
  }
  const refused = await mcpCall(engram, undefined);
  assert.is(refused.headers.get('access-control-allow-origin'), '*');
  assert.match(refused.headers.get('access-control-expose-headers')!, 'www-authenticate');
});

test('a public client registers with https and loopback redirect URIs', async ({ engram }) => {
  const redirectUris = ['https://app.example/callback', 'http://localhost/callback', 'http://127.0.0.1:8080/cb', 'http://[::1]:9000/cb'];
  const registered = await post(`${engram.url}/oauth/register`, { client_name: 'Claude Code', redirect_uris: redirectUris, token_endpoint_auth_method: 'none' }, 'json');
  assert.is(registered.status, 201, JSON.stringify(registered.json));
  assert.match(registered.json.client_id, /^cli_/);
  assert.is(registered.json.client_secret, undefined);
  assert.is(registered.json.client_name, 'Claude Code');
  assert.equal(registered.json.redirect_uris, redirectUris);
  assert.is(registered.json.token_endpoint_auth_method, 'none');
  assert.equal(registered.json.grant_types, ['authorization_code', 'refresh_token']);
  const stored = await engram.running.deps.accounts.store.getClient(registered.json.client_id);
  assert.equal(stored?.redirectUris, redirectUris);
});

test('registration refuses plain http off loopback, other schemes and fragments with invalid_redirect_uri', async ({ engram }) => {
  for (const uri of ['http://app.example/callback', 'myapp://callback', 'https://app.example/cb#frag', 'not a uri']) {
    const refused = await post(`${engram.url}/oauth/register`, { redirect_uris: [uri] }, 'json');
    assert.is(refused.status, 400, uri);
    assert.is(refused.json.error, 'invalid_redirect_uri', uri);
    assert.type(refused.json.error_description, 'string');
  }
  const none = await post(`${engram.url}/oauth/register`, { client_name: 'no uris' }, 'json');
  assert.is(none.json.error, 'invalid_redirect_uri');
});

test('registration refuses confidential clients and grant types Engram does not do with invalid_client_metadata', async ({ engram }) => {
  const cases = [
    { token_endpoint_auth_method: 'client_secret_basic' },
    { grant_types: ['client_credentials'] },
    { grant_types: ['refresh_token'] },
    { response_types: ['token'] },
  ];
  for (const extra of cases) {
    const refused = await post(`${engram.url}/oauth/register`, { redirect_uris: ['https://app.example/cb'], ...extra }, 'json');
    assert.is(refused.status, 400, JSON.stringify(extra));
    assert.is(refused.json.error, 'invalid_client_metadata', JSON.stringify(extra));
  }
  const form = await post(`${engram.url}/oauth/register`, { redirect_uris: 'https://app.example/cb' }, 'form');
  assert.is(form.status, 400);
  assert.is(form.json.error, 'invalid_client_metadata');
});

test('registration is rate-limited per client address', async ({ engram }) => {
  let answer;
  for (let i = 0; i < 40; i++) {
    answer = await post(`${engram.url}/oauth/register`, { redirect_uris: ['https://app.example/cb'] }, 'json');
    if (answer.status === 429) break;
  }
  assert.is(answer!.status, 429);
  assert.is(answer!.json.error, 'temporarily_unavailable');
  assert.ok(Number(answer!.headers.get('retry-after')) >= 1);
});

test.run();

const capped = suite<{ engram: TestEngram }>('OAuth client registry cap');

capped.before(async (context) => {
  context.engram = await startEngram({ 'oauth-max-clients': '3' });
});

capped.after(async ({ engram }) => {
  await engram?.close();
});

capped('a full registry refuses with 503 temporarily_unavailable in RFC 7591\'s error shape, and stores nothing', async ({ engram }) => {
  const register = () => post(`${engram.url}/oauth/register`, { client_name: 'flood', redirect_uris: ['https://app.example/cb'] }, 'json');
  for (let i = 0; i < 3; i++) assert.is((await register()).status, 201, `client ${i + 1}`);
  const refused = await register();
  assert.is(refused.status, 503);
  assert.equal(Object.keys(refused.json).sort(), ['error', 'error_description']);
  assert.is(refused.json.error, 'temporarily_unavailable');
  assert.match(refused.json.error_description, 'as many registered clients');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  assert.is(refused.headers.get('cache-control'), 'no-store');
  assert.is(await engram.running.deps.accounts.store.countClients(), 3);
  const bad = await post(`${engram.url}/oauth/register`, { redirect_uris: ['ftp://app.example/cb'] }, 'json');
  assert.is(bad.status, 400, 'a request that is wrong anyway hears why, full or not');
});

capped.run();
