/**
 * What the OAuth tests share: users made through the dashboard's forms (`WebSession`), an
 * org and agent of theirs, a hand-driven authorization code flow (for the cases the MCP
 * SDK's client would never produce), and an `OAuthClientProvider` for the SDK's client
 * that does the browser's part (log-in, consent) over HTTP with the session cookie.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as assert from 'uvu/assert';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { AuthorizationServer } from '../../src/oauth/authorization-server.js';
import type { TestEngram } from '../support/engram.js';
import { WebSession, type WebAnswer } from '../support/web-session.js';

export const PASSWORD = 'a long enough passphrase';

/** A user signed up through the form; the session keeps its cookie. */
export async function signUp(engram: TestEngram, email: string): Promise<WebSession> {
  const web = new WebSession(engram.url);
  const answer = await web.signIn(email, PASSWORD);
  assert.is(answer.status, 303, `sign-up of ${email}: ${answer.text.slice(0, 200)}`);
  return web;
}

export interface OwnAgent {
  orgId: string;
  agentId: string;
}

/** An org of the user (as the dashboard makes it) with an agent in it (through the management API). */
export async function agentFor(engram: TestEngram, email: string, name = 'assistant'): Promise<OwnAgent> {
  const { accounts } = engram.running.deps;
  const user = await accounts.store.findUserByEmail(email);
  assert.ok(user, `user ${email}`);
  const org = await accounts.createOrg(user, `org-${randomBytes(4).toString('hex')}`);
  const created = await engram.api('POST', `/v0/orgs/${org.id}/agents`, {
    name,
    type: 'api_provider',
    upstream: { base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-upstream-secret-key-0000000000000000' },
  });
  assert.is(created.status, 201, JSON.stringify(created.json));
  return { orgId: org.id, agentId: created.json.id };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function post(url: string, body: unknown, type: 'json' | 'form', headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': type === 'json' ? 'application/json' : 'application/x-www-form-urlencoded', ...headers },
    body: type === 'json' ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>).toString(),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

export async function registerClient(engram: TestEngram, redirectUris: string[], name = 'Test client') {
  return post(`${engram.url}/oauth/register`, { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'] }, 'json');
}

export function tokenRequest(engram: TestEngram, params: Record<string, string>) {
  return post(`${engram.url}/oauth/token`, params, 'form');
}

function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39);/g, (_all, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name]!);
}

export interface ConsentPage {
  answer: WebAnswer;
  /** The hidden fields carrying the authorization request (and `_csrf`). */
  fields: Record<string, string>;
  /** The agent choices: `<org id>/<agent id>`. */
  agents: string[];
}

export async function consentPage(web: WebSession, url: string | URL): Promise<ConsentPage> {
  const target = new URL(url, web.baseUrl);
  const answer = await web.get(target.pathname + target.search);
  const fields: Record<string, string> = {};
  for (const [, name, value] of answer.text.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[name!] = unescapeHtml(value!);
  const agents = [...answer.text.matchAll(/<input type="radio" name="agent" value="([^"]+)"/g)].map(([, value]) => unescapeHtml(value!));
  return { answer, fields, agents };
}

/** Answers the consent form (allow, for `agent`, else the first choice); the answer's Location is where the browser goes next. */
export async function answerConsent(web: WebSession, page: ConsentPage, options: { decision?: 'allow' | 'deny'; agent?: string; csrf?: string } = {}) {
  const { _csrf, ...fields } = page.fields;
  const agent = options.agent ?? page.agents[0];
  return web.post('/oauth/authorize', {
    ...fields,
    _csrf: options.csrf ?? _csrf!,
    decision: options.decision ?? 'allow',
    ...(agent === undefined ? {} : { agent }),
  });
}

export interface AuthorizeOptions {
  clientId: string;
  redirectUri: string;
  challenge: string;
  resource?: string;
  state?: string;
}

export function authorizeUrl(engram: TestEngram, options: AuthorizeOptions): string {
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    code_challenge: options.challenge,
    code_challenge_method: 'S256',
    resource: options.resource ?? `${engram.url}/v0/mcp`,
    state: options.state ?? 'state-' + randomBytes(6).toString('hex'),
  });
  return `/oauth/authorize?${params}`;
}

export interface Flow {
  clientId: string;
  redirectUri: string;
  verifier: string;
  code: string;
}

/** Registration, authorization and consent by hand: the code, not yet exchanged. */
export async function codeFor(engram: TestEngram, web: WebSession, agent: OwnAgent, redirectUri = 'http://127.0.0.1:43110/callback'): Promise<Flow> {
  const registered = await registerClient(engram, [redirectUri]);
  assert.is(registered.status, 201, JSON.stringify(registered.json));
  const clientId = registered.json.client_id as string;
  const { verifier, challenge } = pkce();
  const page = await consentPage(web, authorizeUrl(engram, { clientId, redirectUri, challenge }));
  assert.is(page.answer.status, 200, page.answer.text.slice(0, 300));
  const answer = await answerConsent(web, page, { agent: `${agent.orgId}/${agent.agentId}` });
  assert.is(answer.status, 303, answer.text.slice(0, 300));
  const code = new URL(answer.location!).searchParams.get('code');
  assert.ok(code, answer.location!);
  return { clientId, redirectUri, verifier, code };
}

/** The flow's code at the token endpoint, with `change` over the well-formed request (a field set to undefined is left out). */
export function exchangeCode(engram: TestEngram, flow: Flow, change: Record<string, string | undefined> = {}) {
  const params: Record<string, string | undefined> = {
    grant_type: 'authorization_code',
    client_id: flow.clientId,
    code: flow.code,
    code_verifier: flow.verifier,
    redirect_uri: flow.redirectUri,
    ...change,
  };
  return tokenRequest(engram, Object.fromEntries(Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined)));
}

/** The flow carried through the token endpoint: access and refresh token. */
export async function tokensFor(engram: TestEngram, flow: Flow): Promise<{ access_token: string; refresh_token: string; expires_in: number }> {
  const answer = await exchangeCode(engram, flow, { resource: `${engram.url}/v0/mcp` });
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  return answer.json;
}

/** One JSON-RPC call to `/v0/mcp` with a bearer token, answered as is. */
export async function mcpCall(engram: TestEngram, accessToken: string | undefined, method = 'tools/list') {
  const response = await fetch(`${engram.url}/v0/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: text ? JSON.parse(text) : undefined };
}

/**
 * An access token for the grant signed with the server's own key but issued an hour ago,
 * so it expired 45 minutes ago: made by an `AuthorizationServer` over the same stores
 * whose clock is an hour behind.
 */
export async function expiredAccessToken(engram: TestEngram, refreshToken: string): Promise<string> {
  const { accounts, vault, publicUrl } = engram.running.deps;
  const earlier = new AuthorizationServer({ store: accounts.store, accounts, vault, issuer: () => publicUrl(), now: () => Date.now() - 3_600_000 });
  const grant = await accounts.store.getGrant(refreshToken.split('.')[0]!);
  assert.ok(grant, 'the grant of the refresh token');
  return (await earlier.tokens.issue(grant)).token;
}

/**
 * The MCP SDK's view of a client that signs in: it keeps what the SDK asks it to keep,
 * and its `redirectToAuthorization` plays the browser with `authorize` (log in, consent),
 * keeping the code the browser was sent back with.
 */
export class TestOAuthProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  sentState: string | undefined;
  authorizationUrl: URL | undefined;
  /** Where the browser came back to: the redirect URI with `code`, `state`, `iss`. */
  callback: URL | undefined;

  constructor(
    readonly redirectUrl: string,
    private readonly authorize: (url: URL) => Promise<URL>,
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Engram OAuth test client',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state(): string {
    this.sentState = randomBytes(12).toString('base64url');
    return this.sentState;
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
    this.callback = await this.authorize(url);
  }
}
