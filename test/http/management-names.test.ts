/**
 * Issue 15: org, agent and token names are shown in URLs, CLI tables and logs, so they
 * may not carry characters that make them display as another name: direction overrides
 * (`admin\u202Egpj.exe`), zero-width characters (`acme\u200B`), other invisible format
 * characters. Each is refused with a 400 naming the character.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startManagementServer, type ManagementServer } from './management-server.js';

const test = suite<{ server: ManagementServer }>('management names');

test.before(async (context) => {
  context.server = await startManagementServer();
});
test.after(async ({ server }) => server.close());

const DECEPTIVE: Array<[string, string]> = [
  ['right-to-left override', 'billing\u202Eved'],
  ['left-to-right override', '\u202Dacme'],
  ['right-to-left isolate', 'acme\u2067x\u2069'],
  ['right-to-left mark', 'acme\u200F'],
  ['zero-width space', 'ac\u200Bme'],
  ['zero-width joiner', 'ac\u200Dme'],
  ['zero-width non-joiner', 'ac\u200Cme'],
  ['word joiner', 'ac\u2060me'],
  ['byte order mark inside', 'ac\uFEFFme'],
  ['soft hyphen', 'ac\u00ADme'],
  ['Hangul filler', 'acme\u3164'],
  ['line separator', 'ac\u2028me'],
  ['C1 control', 'ac\u0085me'],
];

test('org names: invisible and direction characters are refused with 400', async ({ server }) => {
  for (const [what, name] of DECEPTIVE) {
    const reply = await server.call('POST', '/v0/orgs', { body: { name } });
    assert.is(reply.status, 400, what);
    assert.is(reply.json.error.code, 'invalid_request', what);
    assert.is(reply.json.error.param, 'name', what);
    if (what !== 'C1 control') assert.match(reply.json.error.message, /invisible or text-direction characters \(found U\+[0-9A-F]{4}\)/, what);
  }
  const list = await server.call('GET', '/v0/orgs');
  assert.is(list.json.data.length, 0, 'none was created');
});

test('agent and token names: the same rule, on create and on rename', async ({ server }) => {
  const org = await server.call('POST', '/v0/orgs', { body: { name: 'names-org' } });
  const agentBody = (name: string) => ({ name, type: 'api_provider', upstream: { base_url: 'http://127.0.0.1:9', api_key: 'sk-x' } });
  const agent = await server.call('POST', `/v0/orgs/${org.json.id}/agents`, { body: agentBody('bot') });
  assert.is(agent.status, 201);
  for (const [what, name] of DECEPTIVE) {
    const created = await server.call('POST', `/v0/orgs/${org.json.id}/agents`, { body: agentBody(name) });
    assert.is(created.status, 400, `agent: ${what}`);
    const renamed = await server.call('PATCH', `/v0/orgs/${org.json.id}/agents/${agent.json.id}`, { body: { name } });
    assert.is(renamed.status, 400, `agent rename: ${what}`);
    const token = await server.call('POST', `/v0/orgs/${org.json.id}/agents/${agent.json.id}/tokens`, { body: { name } });
    assert.is(token.status, 400, `token: ${what}`);
    assert.is(token.json.error.param, 'name');
  }
});

test('names in any script, with spaces and emoji, are still accepted', async ({ server }) => {
  for (const name of ['Équipe données', 'فريق', 'チーム 東京', 'team 🚀', 'a.b-c_d']) {
    const reply = await server.call('POST', '/v0/orgs', { body: { name } });
    assert.is(reply.status, 201, name);
  }
});

test.run();
