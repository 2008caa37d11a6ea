/**
 * GitHub Copilot CLI: its own hooks file (~/.copilot/hooks/engram.json, sessionStart and
 * agentStop), the MCP server in mcp-config.json (Copilot expands `${ENGRAM_TOKEN}` in
 * headers), and the bring-your-own-provider variables for the model traffic.
 */
import path from 'node:path';
import { shortBaseUrl, shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { HOOK_NOTES, HOOK_TIMEOUT_SECONDS, hookScripts, TOKEN_ENV } from '../../connect/hooks.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import { hooks as spec } from './hooks.js';

export const recipe: ConnectRecipe = {
  summary: 'The copilot command: provider variables, the memory tools, and hooks that load the index and upload transcripts',
  model: { family: 'openai', fallback: DEFAULT_MODEL.openai, inFiles: false },
  plan(input) {
    const { agent, locations } = input;
    const hooks = hookScripts(input, spec);
    const hook = (command: string) => [{ type: 'command', bash: command, timeoutSec: HOOK_TIMEOUT_SECONDS }];
    return {
      files: [
        {
          type: 'structured',
          path: path.join(locations.home, '.copilot', 'hooks', 'engram.json'),
          format: 'json',
          purpose: 'sessionStart and agentStop hooks',
          edits: [
            { kind: 'set', path: ['version'], value: 1 },
            { kind: 'set', path: ['hooks', 'sessionStart'], value: hook(hooks.sessionStartCommand) },
            { kind: 'set', path: ['hooks', 'agentStop'], value: hook(hooks.stopCommand) },
          ],
        },
        {
          type: 'structured',
          path: path.join(locations.home, '.copilot', 'mcp-config.json'),
          format: 'json',
          purpose: 'the MCP server',
          edits: [
            {
              kind: 'set',
              path: ['mcpServers', 'engram'],
              value: { type: 'http', url: shortMcpUrl(agent.serverUrl), headers: { Authorization: `Bearer \${${TOKEN_ENV}}` }, tools: ['*'] },
            },
          ],
        },
        ...hooks.files,
      ],
      env: {
        [TOKEN_ENV]: '',
        COPILOT_PROVIDER_BASE_URL: shortBaseUrl(agent.serverUrl),
        COPILOT_PROVIDER_API_KEY: `$${TOKEN_ENV}`,
        COPILOT_MODEL: input.model ?? DEFAULT_MODEL.openai,
      },
      commands: [`copilot mcp add --transport http engram '${shortMcpUrl(agent.serverUrl)}' --header 'Authorization: Bearer \${${TOKEN_ENV}}'`],
      notes: [
        'The COPILOT_PROVIDER_* variables send Copilot CLI\'s model requests through Engram (chat completions); COPILOT_MODEL must be a model the agent\'s upstream serves.',
        'With `copilot -p`, add --allow-all-tools (or allow the engram-* tools) so the model may call Engram\'s MCP tools.',
        ...HOOK_NOTES,
      ],
    };
  },
};
