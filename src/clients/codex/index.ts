/**
 * Codex CLI (CLIENTS.md): the session in the `session-id` header and in `prompt_cache_key`;
 * the working directory as `<cwd>/path</cwd>` in the `<environment_context>` user message it
 * writes, the git roots it works in as `workspaces` of its turn metadata
 * (`x-codex-turn-metadata`, as a header and as a key of the body's `client_metadata`);
 * its AGENTS.md as a user message `# AGENTS.md instructions for <dir>`
 * (`<user_instructions>` in older versions); rollout files as transcripts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { isObject } from '../../protocols/shared.js';
import type { ClientProfile } from '../types.js';
import { recipe } from './connect.js';
import { hooks } from './hooks.js';
import { codexFormat, isInstructionFile } from './transcript.js';

const TURN_METADATA = 'x-codex-turn-metadata';

/**
 * The git roots Codex's turn metadata lists (`{"workspaces": {"/path": {...}}}`, a JSON
 * text); none when it is not such a text.
 */
function codexWorkspaces(metadata: unknown): string[] {
  if (typeof metadata !== 'string' || !metadata.includes('"workspaces"')) return [];
  try {
    const workspaces = (JSON.parse(metadata) as { workspaces?: unknown }).workspaces;
    return typeof workspaces === 'object' && workspaces !== null && !Array.isArray(workspaces) ? Object.keys(workspaces) : [];
  } catch {
    return [];
  }
}

export const codex: ClientProfile = {
  id: 'codex',
  title: 'Codex CLI',
  session: {
    headers: ['session-id'],
    body: {
      protocols: ['chat-completions', 'responses'],
      read: (body) => (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key ? body.prompt_cache_key : undefined),
    },
  },
  place: {
    needles: ['wd'],
    mentions: ['<cwd>'],
    directory: /<cwd>([^<\n\r]+)<\/cwd>/g,
    rootsFromHeaders: (headers: IncomingHttpHeaders) => codexWorkspaces(headers[TURN_METADATA]),
    rootsFromBody: (body) => (isObject(body.client_metadata) ? codexWorkspaces(body.client_metadata[TURN_METADATA]) : []),
    skipKeys: ['client_metadata'],
    isPlaceMessage: (text) => text.trimStart().startsWith('<environment_context>'),
  },
  isInstructionFile,
  mcpTools: { prefix: (server) => `mcp__${server}__`, namespace: (server) => `mcp__${server}` },
  transcript: { ...codexFormat, routes: ['codex'] },
  hooks,
  connect: recipe,
};
