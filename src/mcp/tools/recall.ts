import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ENGRAM_TOOL_MARKER, RECALL_TOOL } from '../../domain/engram-tools.js';
import { recall } from '../../memory/recall.js';
import { meaningRelevance } from '../../memory/search-relevance.js';
import { badProject, callVisibility, projectParameter, textResult, type McpContext } from '../context.js';

const MAX_LIMIT = 50;

export function registerRecall(server: McpServer, context: McpContext): void {
  server.registerTool(
    RECALL_TOOL,
    {
      title: 'Recall memories',
      description:
        'Search your long-term memory: facts about where things are in this project or environment, and procedures ' +
        'that avoid mistakes made before. Use it before exploring the codebase or running a command you are unsure of, ' +
        'when a task touches something you may have worked on before, and after an error, to see whether it was solved ' +
        `already. Returns the best matches with their ids and relevance. ${ENGRAM_TOOL_MARKER}`,
      inputSchema: {
        query: z.string().min(1).max(2000).describe('What you want to know, in a few words or a question'),
        kind: z.enum(['factual', 'procedural']).optional().describe('Only facts (where things are) or only procedures (how to avoid mistakes)'),
        limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe('How many results at most (default 5)'),
        project: projectParameter('Its memories are searched with those that hold everywhere; without it, only those that hold everywhere.'),
      },
      outputSchema: {
        results: z.array(
          z.object({ id: z.string(), kind: z.enum(['factual', 'procedural']), topic: z.string(), content: z.string(), relevance: z.number() }),
        ),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    // `signal` aborts when the call's HTTP request closes (the client went away or closed its transport).
    async ({ query, kind, limit, project }, { signal }) => {
      const visible = callVisibility(context, project);
      if (!visible) return badProject(project);
      const agent = await context.agent();
      const found = await recall(context.search, agent, { query, kind, limit: limit ?? 5, visible, signal });
      // Ranked by the search; each shown with its relevance on the agent's one scale (that of `min_score`).
      const relevance = meaningRelevance(context.search.embedder, agent);
      const results = found.map((result) => ({
        id: result.reflection.id,
        kind: result.reflection.kind,
        topic: result.reflection.topic,
        content: result.reflection.content,
        relevance: Math.round(relevance(result) * 1000) / 1000,
      }));
      if (results.length > 0) {
        // A hit is a use: it moves the reflection up the root index.
        await context.reflections.markUsed(agent.id, results.map((result) => result.id), context.now());
        context.index.touch(agent.id);
      }
      const text = results.length === 0
        ? `No memories match "${query}".`
        : results.map((r) => `- ${r.id} [${r.kind}] (${r.topic}) ${r.content} (relevance ${r.relevance})`).join('\n');
      return textResult(text, { structured: { results } });
    },
  );
}
