/**
 * The authorization server on two Engram replicas sharing one real nats-server (control
 * stores on NATS KV), as behind a load balancer: every step of a sign-in may land on
 * either replica, and each finds what the other stored: the client, the session, the
 * grant, and the one signing key (so a token signed by one verifies on the other).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startEngram, type TestEngram } from '../support/engram.js';
import { natsServerBinary, startNatsServer, type NatsServer } from '../support/nats-server.js';
import { WebSession } from '../support/web-session.js';
import { agentFor, answerConsent, authorizeUrl, consentPage, mcpCall, pkce, registerClient, signUp, tokenRequest } from './support.js';

interface Context {
  nats: NatsServer;
  dataDir: string;
  a: TestEngram;
  b: TestEngram;
}

const test = suite<Context>('OAuth across two replicas on NATS');

/** The address clients know the replicas by (a load balancer's): the issuer both share. */
const PUBLIC_URL = 'https://engram.example';
const RESOURCE = `${PUBLIC_URL}/v0/mcp`;

test.before(async (context) => {
  if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
  context.nats = await startNatsServer();
  context.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-oauth-replicas-'));
  const settings = { 'nats-url': context.nats.url, 'nats-prefix': 'oauth', 'public-url': PUBLIC_URL, 'secret-key': 'cd'.repeat(32) };
  context.a = await startEngram(settings, context.dataDir);
  context.b = await startEngram(settings, context.dataDir);
});

test.after(async ({ a, b, nats, dataDir }) => {
  await a?.close();
  await b?.close();
  await nats?.cleanup();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

test('register on one replica, consent on the other, tokens from either, used on either; replaying a refresh token anywhere revokes everywhere', async ({ a, b }) => {
  assert.match(a.running.engines.control, /^nats /);
  const onA = await signUp(a, 'replicated@example.com');
  const agent = await agentFor(a, 'replicated@example.com', 'shared agent');
  // The same browser reaching the other replica: its cookies are all it carries.
  const onB = new WebSession(b.url);
  for (const [name, value] of onA.cookies) onB.cookies.set(name, value);

  const redirectUri = 'http://127.0.0.1:43130/callback';
  const registered = await registerClient(a, [redirectUri]);
  assert.is(registered.status, 201);
  const clientId = registered.json.client_id as string;
  const { verifier, challenge } = pkce();
  const page = await consentPage(onB, authorizeUrl(b, { clientId, redirectUri, challenge, resource: RESOURCE }));
  assert.is(page.answer.status, 200, page.answer.text.slice(0, 300));
  const consent = await answerConsent(onB, page, { agent: `${agent.orgId}/${agent.agentId}` });
  assert.is(consent.status, 303);
  const location = new URL(consent.location!);
  assert.is(location.searchParams.get('iss'), PUBLIC_URL);

  const exchanged = await tokenRequest(a, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: location.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: redirectUri,
    resource: RESOURCE,
  });
  assert.is(exchanged.status, 200, JSON.stringify(exchanged.json));
  assert.is((await mcpCall(b, exchanged.json.access_token)).status, 200, 'signed on A, verified on B');
  assert.is((await mcpCall(a, exchanged.json.access_token)).status, 200);

  const refreshed = await tokenRequest(b, { grant_type: 'refresh_token', client_id: clientId, refresh_token: exchanged.json.refresh_token });
  assert.is(refreshed.status, 200, JSON.stringify(refreshed.json));
  assert.is((await mcpCall(a, refreshed.json.access_token)).status, 200, 'signed on B, verified on A');

  const replay = await tokenRequest(a, { grant_type: 'refresh_token', client_id: clientId, refresh_token: exchanged.json.refresh_token });
  assert.is(replay.json.error, 'invalid_grant');
  assert.is((await mcpCall(b, refreshed.json.access_token)).status, 401);
});

test.run();
