/**
 * Engram's MCP server used by the real OpenAI Agents SDK (`@openai/agents`): the agent's
 * model goes through Engram's chat-completions proxy to the scripted upstream, and its
 * `mcpServers` holds Engram's MCP endpoint. The scripted model calls `recall`; the SDK
 * runs it against Engram and sends the result back in the next request.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { Agent, MCPServerStreamableHttp, OpenAIChatCompletionsModel, run, setTracingDisabled } from '@openai/agents';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

const REFLECTION = 'The release checklist lives in docs/RELEASE.md.';
const FINAL = 'The release checklist is in docs/RELEASE.md.';
const MARKER = '[engram-memory]';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  mcp?: MCPServerStreamableHttp;
}
const test = suite<Context>('MCP server with the OpenAI Agents SDK');

test.before(async (context) => {
  setTracingDisabled(true);
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram();
  context.agent = await context.engram.createAgent(context.upstream.url);
});
test.after(async ({ mcp, engram, upstream }) => {
  await mcp?.close().catch(() => undefined);
  await engram.close();
  await upstream.close();
});

const mcpUrl = (agent: TestAgent) => `${agent.baseUrl}/v0/mcp`;

test('an Agents SDK agent calls recall on Engram through MCP and gets the stored reflection back', async (context) => {
  const { upstream, agent } = context;

  // A reflection stored through the MCP `remember` tool, with the MCP SDK's own client.
  const client = new Client({ name: 'engram-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl(agent)), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
  const remembered = await client.callTool({ name: 'remember', arguments: { content: REFLECTION, kind: 'factual', topic: 'Release' } });
  assert.not.ok(remembered.isError, JSON.stringify(remembered));
  const stored = remembered.structuredContent as { id?: string; stored: boolean };
  assert.is(stored.stored, true);
  await client.close();

  const mcp = new MCPServerStreamableHttp({
    name: 'engram',
    url: mcpUrl(agent),
    requestInit: { headers: { authorization: `Bearer ${agent.token}` } },
    cacheToolsList: true,
  });
  context.mcp = mcp;
  await mcp.connect();

  const model = new OpenAIChatCompletionsModel(new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 }), 'gpt-test');
  const assistant = new Agent({
    name: 'release-helper',
    instructions: 'Answer questions about this project. Use your memory tools.',
    model,
    mcpServers: [mcp],
  });

  upstream.enqueue({ type: 'tool_call', name: 'recall', arguments: { query: 'release checklist' } }, { type: 'text', text: FINAL });
  const result = await run(assistant, 'Where is the release checklist?');
  assert.is(result.finalOutput, FINAL);

  const requests = upstream.conversationRequests();
  assert.is(requests.length, 2, `two model calls: ${requests.map((r) => r.path).join(', ')}`);
  for (const request of requests) assert.is(request.path.split('?')[0], '/v1/chat/completions');

  // The tools offered to the model: Engram's, under their bare names, with the marker.
  const offered = requests[0].json.tools as Array<{ type: string; function: { name: string; description?: string } }>;
  assert.ok(Array.isArray(offered), 'the first request offers tools');
  const names = offered.map((tool) => tool.function.name).sort();
  assert.equal(names, ['forget', 'memory_index', 'recall', 'remember'], `tool names sent upstream: ${names.join(', ')}`);
  for (const tool of offered) {
    assert.is(tool.type, 'function');
    assert.ok((tool.function.description ?? '').trimEnd().endsWith(MARKER), `${tool.function.name}: ${tool.function.description}`);
  }

  // The second request carries the assistant's tool call and the tool result holding the reflection.
  const messages = requests[1].json.messages as Array<{ role: string; content?: unknown; tool_calls?: any[]; tool_call_id?: string }>;
  const call = messages.find((message) => message.role === 'assistant' && message.tool_calls?.length)?.tool_calls?.[0];
  assert.ok(call, 'the assistant tool call is replayed');
  assert.is(call.function.name, 'recall');
  assert.equal(JSON.parse(call.function.arguments), { query: 'release checklist' });
  const toolResult = messages.find((message) => message.role === 'tool');
  assert.ok(toolResult, 'a tool result message follows');
  assert.is(toolResult.tool_call_id, call.id);
  const content = typeof toolResult.content === 'string' ? toolResult.content : JSON.stringify(toolResult.content);
  assert.match(content, 'docs/RELEASE.md');
  if (stored.id) assert.match(content, stored.id);

  await mcp.close();
  context.mcp = undefined;
});

test.run();
