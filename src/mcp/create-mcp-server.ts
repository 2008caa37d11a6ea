/**
 * One agent's MCP server (endpoint 4): the tools `recall`, `remember`, `forget` and
 * `memory_index`, and the root index as a resource. One file per tool; tool failures
 * the model can act on are `isError` results, protocol failures (bad arguments) throw.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { McpContext } from './context.js';
import { registerForget } from './tools/forget.js';
import { registerMemoryIndex } from './tools/memory-index.js';
import { registerRecall } from './tools/recall.js';
import { registerRemember } from './tools/remember.js';

export const MCP_SERVER_NAME = 'engram';

export function createMcpServer(context: McpContext, version: string): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, title: 'Engram memory', version },
    {
      capabilities: { tools: {}, resources: {} },
      instructions:
        'Engram is your long-term memory across sessions. Read memory_index at the start of a task, recall before ' +
        'exploring or after an error, remember what a future session should know, forget what turned out wrong.',
    },
  );
  registerRecall(server, context);
  registerRemember(server, context);
  registerForget(server, context);
  registerMemoryIndex(server, context);
  return server;
}
