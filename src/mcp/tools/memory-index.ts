import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ENGRAM_TOOL_MARKER, MEMORY_INDEX_TOOL, MEMORY_INDEX_URI } from '../../domain/engram-tools.js';
import { currentRootIndex } from '../../memory/root-index.js';
import { badProject, callVisibility, projectParameter, textResult, type McpContext } from '../context.js';

/** The `memory_index` tool and the same index as a resource. */
export function registerMemoryIndex(server: McpServer, context: McpContext): void {
  server.registerTool(
    MEMORY_INDEX_TOOL,
    {
      title: 'Memory index',
      description:
        'The table of contents of your long-term memory: every topic with its memories, procedures and the most used ' +
        `first. Read it at the start of a task to see what you already know, then recall details. ${ENGRAM_TOOL_MARKER}`,
      inputSchema: { project: projectParameter('Its memories are listed with those that hold everywhere; without it, only those that hold everywhere.') },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ project }) => {
      const visible = callVisibility(context, project);
      if (!visible) return badProject(project);
      return textResult(await currentRootIndex(context, (await context.agent()).id, visible));
    },
  );
  server.registerResource(
    'memory-index',
    MEMORY_INDEX_URI,
    { title: 'Memory index', description: 'The root memory index: topics and memories of this agent', mimeType: 'text/markdown' },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/markdown', text: await currentRootIndex(context, (await context.agent()).id, context.visible) }] }),
  );
}
