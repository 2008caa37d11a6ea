import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ENGRAM_TOOL_MARKER, REMEMBER_TOOL } from '../../domain/engram-tools.js';
import { checkReflection, MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TOPIC_CHARS } from '../../memory/reflection-writer.js';
import { TAGS_PARAMETER_DESCRIPTION } from '../../memory/tag-guidance.js';
import { badProject, callVisibility, projectParameter, textResult, type McpContext } from '../context.js';

export function registerRemember(server: McpServer, context: McpContext): void {
  server.registerTool(
    REMEMBER_TOOL,
    {
      title: 'Remember',
      description:
        'Store one lasting memory for later sessions: a fact (where something is, what something is called) or a ' +
        'procedure (how to avoid a mistake you or the user hit). One self-contained sentence or two, no secrets (they ' +
        'are redacted). Use it when you learn something a future session would otherwise have to rediscover. Give it ' +
        'tags: the words a later session would search with are rarely the memory\'s own, and without tags it is found ' +
        'only by its own words until Engram tags it in the background. A memory that restates a stored one is not ' +
        `stored twice. ${ENGRAM_TOOL_MARKER}`,
      inputSchema: {
        content: z.string().min(1).max(MAX_CONTENT_CHARS).describe(`The memory, at most ${MAX_CONTENT_CHARS} characters`),
        kind: z.enum(['factual', 'procedural']).describe('factual: where things are; procedural: how to avoid mistakes'),
        topic: z.string().max(MAX_TOPIC_CHARS).optional().describe('A short topic to file it under, e.g. "deploy" or "tests"'),
        tags: z
          .array(z.string().max(MAX_TAG_CHARS))
          .max(MAX_TAGS)
          .optional()
          .describe(TAGS_PARAMETER_DESCRIPTION),
        project: projectParameter('The memory is kept to it, unless `everywhere` is true; without it, the memory holds everywhere.'),
        everywhere: z
          .boolean()
          .optional()
          .describe('True when it holds beyond this project: about the user, or about tools used everywhere'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async ({ content, kind, topic, tags, project, everywhere }) => {
      const visible = callVisibility(context, project);
      if (!visible) return badProject(project);
      const agent = await context.agent();
      const result = await context.writer.write(agent.id, [{ content, kind, topic, tags, everywhere: everywhere === true }], 'mcp', { ...visible });
      // Some clients (Claude Code, Codex) show the model the structured result instead of
      // the text, so it carries the message too.
      const [stored] = result.stored;
      if (stored) {
        const where = stored.scope ? ` in project ${stored.scope}` : '';
        const message = `Remembered as ${stored.id} [${stored.kind}] (${stored.topic})${where}: ${stored.content}`;
        return textResult(message, { structured: { id: stored.id, stored: true, message } });
      }
      if (result.overLimit > 0) {
        const message =
          `Not remembered: this agent already holds ${result.limit.toLocaleString('en-US')} memories, its limit. ` +
          'Delete ones no longer true (engram reflections delete / purge) or ask the operator to raise ENGRAM_MAX_REFLECTIONS.';
        return textResult(message, { isError: true, structured: { stored: false, message } });
      }
      if (result.noContent > 0) {
        const verdict = checkReflection({ content, kind });
        const why = 'refused' in verdict && verdict.refused === 'no_content' ? verdict.why : 'it says too little';
        const message = `Not remembered: ${why}. Write the memory as one self-contained sentence.`;
        return textResult(message, { isError: true, structured: { stored: false, message } });
      }
      if (result.duplicates > 0) {
        const message = 'Already remembered: a stored memory says the same.';
        return textResult(message, { structured: { stored: false, message } });
      }
      return textResult('Nothing to remember: the content holds no text once secrets are removed.', { isError: true });
    },
  );
}
