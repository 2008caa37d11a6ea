import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { isVisible } from '../../domain/types.js';
import { ENGRAM_TOOL_MARKER, FORGET_TOOL } from '../../domain/engram-tools.js';
import { rebuildRootIndex } from '../../memory/root-index.js';
import { badProject, callVisibility, projectParameter, textResult, type McpContext } from '../context.js';

export function registerForget(server: McpServer, context: McpContext): void {
  server.registerTool(
    FORGET_TOOL,
    {
      title: 'Forget',
      description:
        'Delete one memory by its id (recall shows the ids) when it is wrong or outdated, so it is never ' +
        `recalled or injected again. To correct a memory, forget it and remember the right one. ${ENGRAM_TOOL_MARKER}`,
      inputSchema: {
        id: z.string().min(1).max(200).describe('The id of the memory to delete'),
        project: projectParameter('A memory of another project is not found.'),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async ({ id, project }) => {
      const visible = callVisibility(context, project);
      if (!visible) return badProject(project);
      const agent = await context.agent();
      // Only what this session may see: another user's or another project's memory is as if it did not exist.
      const target = await context.reflections.get(agent.id, id);
      if (!target || !isVisible(target, visible) || !(await context.reflections.delete(agent.id, id))) {
        return textResult(`No memory with id ${id}. Use recall to find the id.`, { isError: true });
      }
      await rebuildRootIndex(agent.id, context);
      return textResult(`Forgot ${id}.`);
    },
  );
}
