/**
 * Claude Code: messages-style base URL (the server's: Claude appends /v1/messages, the
 * token says which agent) and the token in a custom header (environment),
 * the MCP server in ~/.claude.json (user scope; Claude expands `${ENGRAM_TOKEN}` in its
 * headers), SessionStart and Stop hooks in ~/.claude/settings.json.
 */
import path from 'node:path';
import { shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe, Edit } from '../../connect/types.js';
import { commandHookEdits, HOOK_NOTES, hookScripts, TOKEN_ENV } from '../../connect/hooks.js';
import { hooks as spec } from './hooks.js';

/**
 * `--settings-env`: Claude Code applies its settings' `env` to every session, so no shell
 * profile is needed. The header carries the token (Claude's own login or key goes out as
 * well, and Engram ignores it).
 */
function settingsEnvEdits(baseUrl: string, token: string | undefined): Edit[] {
  return [
    { kind: 'set', path: ['env', 'ANTHROPIC_BASE_URL'], value: baseUrl },
    { kind: 'set', path: ['env', 'ANTHROPIC_CUSTOM_HEADERS'], value: `X-Engram-Api-Key: ${token ?? '<ENGRAM_TOKEN>'}` },
  ];
}

export const recipe: ConnectRecipe = {
  summary: 'Anthropic\'s terminal agent: its base URL and a token header, the memory tools, and hooks that load the index and upload transcripts',
  baseUrlForm: 'anthropic',
  settingsEnv: true,
  plan(input) {
    const { agent, locations } = input;
    const hooks = hookScripts(input, spec);
    const header = `Authorization: Bearer \${${TOKEN_ENV}}`;
    return {
      files: [
        {
          type: 'structured',
          path: path.join(locations.home, '.claude.json'),
          format: 'json',
          purpose: 'the MCP server, for every project (user scope)',
          edits: [
            {
              kind: 'set',
              path: ['mcpServers', 'engram'],
              value: { type: 'http', url: shortMcpUrl(agent.serverUrl), headers: { Authorization: `Bearer \${${TOKEN_ENV}}` } },
            },
          ],
        },
        {
          type: 'structured',
          path: path.join(locations.home, '.claude', 'settings.json'),
          format: 'json',
          purpose: input.settingsEnv ? 'SessionStart and Stop hooks; the base URL and token header for every session (env)' : 'SessionStart and Stop hooks',
          edits: [...commandHookEdits(hooks), ...(input.settingsEnv ? settingsEnvEdits(agent.serverUrl, input.token) : [])],
          // Claude Code does not expand variables in its settings' env: the token is written as it is.
          ...(input.settingsEnv ? { secret: true } : {}),
        },
        ...hooks.files,
      ],
      env: {
        [TOKEN_ENV]: '',
        ANTHROPIC_BASE_URL: agent.serverUrl,
        ANTHROPIC_CUSTOM_HEADERS: `X-Engram-Api-Key: $${TOKEN_ENV}`,
      },
      commands: [`claude mcp add --scope user --transport http engram '${shortMcpUrl(agent.serverUrl)}' --header '${header}'`],
      notes: [
        'Claude Code keeps its own login or ANTHROPIC_API_KEY: Engram ignores the client\'s provider credentials and calls the agent\'s upstream with the agent\'s key.',
        'The MCP header is stored as ${ENGRAM_TOKEN}; Claude Code expands it when it connects (`claude mcp list` shows engram ✔ Connected).',
        'Claude Code rewrites ~/.claude.json while it runs: write with no Claude Code session open.',
        ...HOOK_NOTES,
      ],
    };
  },
};
