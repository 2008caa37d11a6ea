/**
 * The global MCP server end to end with the MCP SDK's own client and an
 * `OAuthClientProvider`: the first request is refused with 401, the client discovers
 * Engram's authorization server from the challenge, registers itself, sends the browser
 * to the authorization page (log-in, consent for one of two agents), exchanges the code
 * with its PKCE verifier, and then lists the tools and recalls that agent's memory. When
 * its access token expires, the SDK refreshes it and carries on.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startEngram, type TestEngram } from '../support/engram.js';
import { WebSession } from '../support/web-session.js';
import { agentFor, answerConsent, consentPage, expiredAccessToken, PASSWORD, signUp, TestOAuthProvider } from './support.js';

const test = suite<{ engram: TestEngram }>('global MCP server: sign-in with the MCP SDK client');

test.before(async (context) => {
  context.engram = await startEngram();
});

test.after(async ({ engram }) => {
  await engram?.close();
});

const REFLECTION = 'The release checklist lives in docs/RELEASE.md.';
const OTHER_AGENTS_REFLECTION = 'The release checklist of the other project is in the wiki.';
const CALLBACK = 'http://127.0.0.1:43111/callback';

interface RecallResult {
  results: Array<{ content: string }>;
}

test('an MCP client signs in to /v0/mcp with no token in its config, recalls its agent\'s memory, and refreshes when its token expires', async ({ engram }) => {
  const email = 'mcp-user@example.com';
  await signUp(engram, email);
  const agent = await agentFor(engram, email, 'release helper');
  const other = await agentFor(engram, email, 'other project');
  for (const [target, content] of [[agent, REFLECTION], [other, OTHER_AGENTS_REFLECTION]] as const) {
    const stored = await engram.api('POST', `/v0/orgs/${target.orgId}/agents/${target.agentId}/reflections`, { content, kind: 'factual', topic: 'release' });
    assert.is(stored.status, 201, JSON.stringify(stored.json));
  }

  // A browser without a session: it logs in when the authorization page asks, then consents.
  const browser = new WebSession(engram.url);
  const provider = new TestOAuthProvider(CALLBACK, async (url) => {
    const first = await browser.get(url.pathname + url.search);
    assert.is(first.status, 303, 'not signed in: sent to log in');
    const login = new URL(first.location!, engram.url);
    assert.is(login.pathname, '/login');
    await browser.get(login.pathname + login.search);
    const loggedIn = await browser.post('/login', { email, password: PASSWORD, next: login.searchParams.get('next')! });
    assert.is(loggedIn.status, 303);
    assert.is(loggedIn.location, url.pathname + url.search, 'back to the authorization request after logging in');
    const page = await consentPage(browser, loggedIn.location!);
    assert.is(page.answer.status, 200);
    assert.match(page.answer.text, 'Engram OAuth test client');
    assert.match(page.answer.text, '127.0.0.1:43111');
    assert.equal(page.agents.sort(), [`${agent.orgId}/${agent.agentId}`, `${other.orgId}/${other.agentId}`].sort());
    const answer = await answerConsent(browser, page, { agent: `${agent.orgId}/${agent.agentId}` });
    assert.is(answer.status, 303);
    return new URL(answer.location!);
  });

  const url = new URL(`${engram.url}/v0/mcp`);
  const refused = await new Client({ name: 'oauth-test', version: '1.0.0' })
    .connect(new StreamableHTTPClientTransport(url, { authProvider: provider }))
    .then(() => undefined, (error: unknown) => error);
  assert.instance(refused, UnauthorizedError, 'the first connection needs the user: the SDK sent the browser to authorize');

  // Discovery and registration happened from the 401 alone.
  assert.match(String(provider.client?.client_id), /^cli_/);
  const authorization = provider.authorizationUrl!;
  assert.is(authorization.origin + authorization.pathname, `${engram.url}/oauth/authorize`);
  assert.is(authorization.searchParams.get('code_challenge_method'), 'S256');
  assert.is(authorization.searchParams.get('resource'), `${engram.url}/v0/mcp`);
  assert.is(authorization.searchParams.get('scope'), 'memory');
  const callback = provider.callback!;
  assert.is(callback.origin + callback.pathname, CALLBACK);
  assert.is(callback.searchParams.get('state'), provider.sentState);
  assert.is(callback.searchParams.get('iss'), engram.url, 'RFC 9207: the response names its issuer');

  const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
  await transport.finishAuth(callback.searchParams.get('code')!);
  assert.ok(provider.saved?.access_token);
  assert.match(provider.saved!.refresh_token!, /^grt_/);

  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    assert.equal(tools, ['forget', 'memory_index', 'recall', 'remember']);

    const recalled = await client.callTool({ name: 'recall', arguments: { query: 'where is the release checklist' } });
    assert.not.ok(recalled.isError, JSON.stringify(recalled));
    const contents = (recalled.structuredContent as unknown as RecallResult).results.map((result) => result.content);
    assert.ok(contents.includes(REFLECTION), JSON.stringify(contents));
    assert.not.ok(contents.includes(OTHER_AGENTS_REFLECTION), 'only the chosen agent\'s memory');

    // The access token runs out: the next call is refused, the SDK refreshes and retries.
    const before = provider.saved!;
    const expired = await expiredAccessToken(engram, before.refresh_token!);
    provider.saved = { ...before, access_token: expired };
    const again = await client.callTool({ name: 'recall', arguments: { query: 'release checklist' } });
    assert.not.ok(again.isError, JSON.stringify(again));
    assert.ok((again.structuredContent as unknown as RecallResult).results.some((result) => result.content === REFLECTION));
    assert.is.not(provider.saved.access_token, expired);
    assert.is.not(provider.saved.refresh_token, before.refresh_token, 'the refresh token rotated');
  } finally {
    await client.close();
  }

  // The dashboard lists the connection, for the agent chosen.
  const connections = await browser.get('/account/connections');
  assert.is(connections.status, 200);
  assert.match(connections.text, 'Engram OAuth test client');
  assert.match(connections.text, 'release helper');
});

test.run();
