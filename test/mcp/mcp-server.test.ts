/**
 * Endpoint 4 through the MCP SDK's own client over real HTTP: initialize, list tools,
 * remember → recall → forget, the index as a tool and a resource, and who may connect.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { TAGS_PARAMETER_DESCRIPTION } from '../../src/memory/tag-guidance.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  other: TestAgent;
}
const test = suite<Context>('MCP server');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
  context.other = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ engram, upstream }) => {
  await engram.close();
  await upstream.close();
});

const mcpUrl = (agent: TestAgent) => new URL(`${agent.baseUrl}/v0/mcp`);

async function connect(agent: TestAgent, token = agent.token, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl(agent), { requestInit: { headers: { authorization: `Bearer ${token}`, ...headers } } });
  await client.connect(transport);
  return client;
}

const text = (result: any): string => result.content.map((part: any) => part.text).join('\n');

test('initialize, tools with descriptions and the marker, remember → recall → forget, memory_index', async ({ agent }) => {
  const client = await connect(agent);
  assert.is(client.getServerVersion()?.name, 'engram');
  const { tools } = await client.listTools();
  assert.equal(tools.map((tool) => tool.name).sort(), ['forget', 'memory_index', 'recall', 'remember']);
  for (const tool of tools) assert.match(tool.description ?? '', '[engram-memory]', `${tool.name} carries the marker`);

  const remembered = await client.callTool({
    name: 'remember',
    arguments: { content: 'The staging database is pg-stage-3 on port 6543.', kind: 'factual', topic: 'Databases' },
  });
  assert.not.ok(remembered.isError);
  const id = (remembered.structuredContent as any).id as string;
  assert.type(id, 'string');

  const again = await client.callTool({ name: 'remember', arguments: { content: 'the staging database is pg-stage-3 on port 6543', kind: 'factual' } });
  assert.is((again.structuredContent as any).stored, false, 'a restatement is not stored twice');
  assert.match((again.structuredContent as any).message, 'Already remembered', 'the structured result says so too');

  const recalled = await client.callTool({ name: 'recall', arguments: { query: 'which database does staging use?' } });
  const results = (recalled.structuredContent as any).results;
  assert.is(results[0].id, id);
  assert.is(results[0].topic, 'databases');
  assert.type(results[0].relevance, 'number');
  assert.match(text(recalled), 'pg-stage-3');
  const procedural = await client.callTool({ name: 'recall', arguments: { query: 'staging database', kind: 'procedural' } });
  assert.equal((procedural.structuredContent as any).results, [], 'the kind filter applies');

  const index = await client.callTool({ name: 'memory_index', arguments: {} });
  assert.match(text(index), 'pg-stage-3');
  const resource = await client.readResource({ uri: 'engram://memory-index' });
  assert.match((resource.contents[0] as any).text, 'pg-stage-3');

  const forgotten = await client.callTool({ name: 'forget', arguments: { id } });
  assert.not.ok(forgotten.isError);
  const gone = await client.callTool({ name: 'recall', arguments: { query: 'which database does staging use?' } });
  assert.equal((gone.structuredContent as any).results, []);
  assert.not.match(text(await client.callTool({ name: 'memory_index', arguments: {} })), 'pg-stage-3');
  const twice = await client.callTool({ name: 'forget', arguments: { id } });
  assert.ok(twice.isError, 'forgetting an unknown id is a tool error the model can read');
  await client.close();
});

test('a remembered secret is redacted; recall updates use counts', async ({ engram, agent }) => {
  const client = await connect(agent);
  const secret = 'sk-proj-Q7vX2mN9pL4kR8tY1wZ5cB3nH6jF0dS2aG7eK9uM';
  const stored = await client.callTool({ name: 'remember', arguments: { content: `The CI deploy key is ${secret} in the vault.`, kind: 'factual' } });
  assert.not.match(text(stored), secret);
  const id = (stored.structuredContent as any).id;
  await client.callTool({ name: 'recall', arguments: { query: 'CI deploy key vault' } });
  const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections/${id}`);
  assert.is(listed.status, 200);
  assert.not.match(JSON.stringify(listed.json), secret);
  assert.is(listed.json.source, 'mcp');
  assert.is(listed.json.use_count, 1);
  await client.close();
});

test('remember takes tags: recall finds the memory by a tag it does not say, and the API lists them', async ({ engram, agent }) => {
  const client = await connect(agent);
  const { tools } = await client.listTools();
  const remember = tools.find((tool) => tool.name === 'remember');
  const tagsParameter = (remember?.inputSchema.properties as any).tags;
  assert.ok(tagsParameter, 'the schema offers tags');
  // Asked for as extraction asks for them, from the same guidance, and the tool says to give them.
  assert.is(tagsParameter.description, TAGS_PARAMETER_DESCRIPTION);
  assert.match(tagsParameter.description, 'the symptom or error message');
  assert.match(remember?.description ?? '', 'Give it tags');
  const stored = await client.callTool({
    name: 'remember',
    arguments: { content: 'Nightly exports land in s3://acme-exports/nightly.', kind: 'factual', tags: ['data dump', 'backup bucket'] },
  });
  const id = (stored.structuredContent as any).id;
  const recalled = await client.callTool({ name: 'recall', arguments: { query: 'where does the data dump go?' } });
  assert.is((recalled.structuredContent as any).results[0]?.id, id);
  const listed = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/reflections/${id}`);
  assert.equal(listed.json.tags, ['data dump', 'backup bucket']);
  const tooMany = await client.callTool({ name: 'remember', arguments: { content: 'x', kind: 'factual', tags: Array.from({ length: 13 }, (_, i) => `t${i}`) } });
  assert.ok(tooMany.isError, 'more than 12 tags is refused with a message');
  await client.close();
});

test('recall hits move a memory up the root index', async ({ agent, engram }) => {
  const client = await connect(agent);
  const store = (content: string) => client.callTool({ name: 'remember', arguments: { content, kind: 'factual', topic: 'services' } });
  await store('The billing service runs on port 7001.');
  await store('The search service runs on port 7002.');
  const index = async () => (await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/index`)).json.markdown as string;
  const position = (markdown: string, what: string) => markdown.indexOf(what);
  const before = await index();
  // Whichever of the two is listed second is recalled until it leads its topic.
  const [leader, behind] = position(before, 'billing') < position(before, 'search') ? ['billing', 'search'] : ['search', 'billing'];
  for (let i = 0; i < 3; i++) await client.callTool({ name: 'recall', arguments: { query: `${behind} service`, limit: 1 } });
  await eventually(async () => {
    const markdown = await index();
    return position(markdown, behind) < position(markdown, leader) ? true : undefined;
  }, 10_000, `the recalled ${behind} memory to lead its topic`);
  await client.close();
});

test('project: remember keeps a memory to the project the model names; recall, memory_index and forget find it only in that project', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const client = await connect(agent);
  const remember = (args: Record<string, unknown>) => client.callTool({ name: 'remember', arguments: { kind: 'procedural', topic: 'Testing', ...args } });
  const kept = await remember({ content: 'Run the storefront tests with make test-storefront.', project: 'alpha-shop' });
  assert.not.ok(kept.isError, text(kept));
  assert.match(text(kept), 'in project alpha-shop');
  const byPath = await remember({ content: 'Seed the storefront database with make seed.', project: '/home/dev/src/alpha-shop' });
  assert.match(text(byPath), 'in project alpha-shop', 'a path is its repository’s name');
  const everywhere = await remember({ content: 'The user prefers short commit messages.', kind: 'factual', project: 'alpha-shop', everywhere: true });
  assert.not.match(text(everywhere), 'in project');
  const listed = (await engram.reflections(agent)).map((r: any) => [r.content.slice(0, 20), r.scope]).sort();
  assert.equal(listed, [['Run the storefront t', 'alpha-shop'], ['Seed the storefront ', 'alpha-shop'], ['The user prefers sho', null]]);

  const recall = async (project?: string) =>
    text(await client.callTool({ name: 'recall', arguments: { query: 'how do I run the storefront tests', ...(project ? { project } : {}) } }));
  assert.match(await recall('alpha-shop'), 'make test-storefront');
  assert.not.match(await recall('beta-crm'), 'make test-storefront', 'never another project’s');
  assert.not.match(await recall(), 'make test-storefront', 'nor a call that names none');
  const index = async (project?: string) => text(await client.callTool({ name: 'memory_index', arguments: project ? { project } : {} }));
  assert.match(await index('alpha-shop'), 'make test-storefront');
  assert.not.match(await index('beta-crm'), 'make test-storefront');
  assert.match(await index('beta-crm'), 'short commit messages', 'what holds everywhere is in every project’s index');

  const bad = await client.callTool({ name: 'recall', arguments: { query: 'tests', project: 'src/alpha-shop' } });
  assert.ok(bad.isError);
  assert.match(text(bad), 'no project name');

  // A connection whose header names the project: the header wins over what the model says.
  const pinned = await connect(agent, agent.token, { 'x-engram-scope': 'beta-crm' });
  assert.not.match(text(await pinned.callTool({ name: 'recall', arguments: { query: 'how do I run the storefront tests', project: 'alpha-shop' } })), 'make test-storefront');
  const id = (kept.structuredContent as any).id as string;
  assert.ok((await pinned.callTool({ name: 'forget', arguments: { id, project: 'alpha-shop' } })).isError, 'nor can it forget another project’s');
  assert.not.ok((await client.callTool({ name: 'forget', arguments: { id, project: 'alpha-shop' } })).isError);
  assert.not.match(await recall('alpha-shop'), 'make test-storefront');
  await pinned.close();
  await client.close();
});

test('no token, a wrong token, or another agent’s token: refused with 401 and WWW-Authenticate', async ({ agent, other }) => {
  const post = (token?: string) =>
    fetch(mcpUrl(agent), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
  for (const token of [undefined, 'egm_wrong_token_000000000000000000', other.token]) {
    const response = await post(token);
    assert.is(response.status, 401, String(token));
    assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer /);
    const body = await response.json();
    assert.is(body.jsonrpc, '2.0');
    assert.type(body.error.code, 'number');
  }
  let refused: unknown;
  await connect(agent, other.token).catch((error) => (refused = error));
  assert.ok(refused, 'the SDK client cannot connect with another agent’s token');
});

test('stateless: no session id, every request stands alone; bad JSON-RPC and bad arguments get MCP errors', async ({ agent, other }) => {
  const client = await connect(agent);
  const transport = (client as any)._transport as StreamableHTTPClientTransport;
  assert.is(transport.sessionId, undefined, 'no Mcp-Session-Id is issued');
  const headers = (token: string) => ({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    authorization: `Bearer ${token}`,
    'mcp-protocol-version': '2025-06-18',
  });
  // Without any initialize on this connection: any replica answers any request.
  const list = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' });
  const listed = await fetch(mcpUrl(agent), { method: 'POST', headers: headers(agent.token), body: list });
  assert.is(listed.status, 200);
  assert.equal((await listed.json()).result.tools.map((tool: { name: string }) => tool.name).sort(), ['forget', 'memory_index', 'recall', 'remember']);
  const stolen = await fetch(mcpUrl(agent), { method: 'POST', headers: headers(other.token), body: list });
  assert.is(stolen.status, 401, "another agent's token is refused");
  const staleSession = await fetch(mcpUrl(agent), { method: 'POST', headers: { ...headers(agent.token), 'mcp-session-id': 'from-before-an-upgrade' }, body: list });
  assert.is(staleSession.status, 200, 'a session id from a stateful server is ignored');

  const malformed = await fetch(mcpUrl(agent), { method: 'POST', headers: headers(agent.token), body: '{"jsonrpc":"2.0",' });
  assert.is(malformed.status, 400);
  assert.is((await malformed.json()).error.code, -32700);

  let unknown: any;
  await client.callTool({ name: 'teleport', arguments: {} }).then((result) => (unknown = result), (error) => (unknown = error));
  assert.ok(unknown.isError, `an unknown tool is refused: ${JSON.stringify(unknown)}`);
  assert.match(text(unknown), 'teleport not found');
  let wrongType: any;
  await client.callTool({ name: 'recall', arguments: { query: 42 } }).then((result) => (wrongType = result), (error) => (wrongType = error));
  assert.ok(wrongType.isError, `wrong argument types are refused: ${JSON.stringify(wrongType)}`);
  assert.match(text(wrongType), /-32602[^]*query/);
  let oversized: any;
  await client
    .callTool({ name: 'remember', arguments: { content: 'x'.repeat(5000), kind: 'factual' } })
    .then((result) => (oversized = result), (error) => (oversized = error));
  assert.ok(oversized.isError, `oversized content is refused: ${JSON.stringify(oversized)}`);
  assert.match(text(oversized), /-32602[^]*1000 characters/);
  const huge = await fetch(mcpUrl(agent), { method: 'POST', headers: headers(agent.token), body: 'x'.repeat(5 * 1024 * 1024) });
  assert.is(huge.status, 413, 'a body over the MCP limit');
  assert.is((await huge.json()).error.code, -32600);
  await client.close();
});

test('GET and DELETE answer 405 with Allow: POST (no stream, no session); 401 first without a token', async ({ agent }) => {
  const auth = { authorization: `Bearer ${agent.token}` };
  const stream = await fetch(mcpUrl(agent), { method: 'GET', headers: { ...auth, accept: 'text/event-stream' } });
  assert.is(stream.status, 405);
  assert.is(stream.headers.get('allow'), 'POST');
  assert.is((await stream.json()).jsonrpc, '2.0');
  const ended = await fetch(mcpUrl(agent), { method: 'DELETE', headers: auth });
  assert.is(ended.status, 405);
  await ended.body?.cancel();
  const anonymous = await fetch(mcpUrl(agent), { method: 'GET', headers: { accept: 'text/event-stream' } });
  assert.is(anonymous.status, 401);
  await anonymous.body?.cancel();
});

test.run();
