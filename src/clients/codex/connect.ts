/**
 * Codex CLI: the Responses provider and the MCP server in config.toml, SessionStart and
 * Stop hooks in hooks.json. Codex 0.169 rejects a SessionStart answer with keys beyond its
 * schema (Copilot's form fails), so the hook asks for `?format=codex`, Claude's shape.
 */
import path from 'node:path';
import { shortBaseUrl, shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { commandHookEdits, HOOK_NOTES, hookScripts, TOKEN_ENV } from '../../connect/hooks.js';
import { hooks as spec } from './hooks.js';

export const recipe: ConnectRecipe = {
  summary: 'OpenAI\'s terminal agent: a Responses provider in config.toml, the memory tools, and session hooks',
  env: ['CODEX_HOME'],
  plan(input) {
    const { agent, locations } = input;
    const codexHome = locations.env.CODEX_HOME ?? path.join(locations.home, '.codex');
    const hooks = hookScripts(input, spec);
    return {
      files: [
        {
          type: 'structured',
          path: path.join(codexHome, 'config.toml'),
          format: 'toml',
          purpose: 'Engram as the model provider, and its MCP server',
          edits: [
            { kind: 'set', path: ['model_provider'], value: 'engram' },
            {
              kind: 'set',
              path: ['model_providers', 'engram'],
              value: { name: 'Engram', base_url: shortBaseUrl(agent.serverUrl), env_key: TOKEN_ENV, wire_api: 'responses' },
            },
            { kind: 'set', path: ['mcp_servers', 'engram'], value: { url: shortMcpUrl(agent.serverUrl), bearer_token_env_var: TOKEN_ENV } },
          ],
        },
        {
          type: 'structured',
          path: path.join(codexHome, 'hooks.json'),
          format: 'json',
          purpose: 'SessionStart and Stop hooks',
          edits: commandHookEdits(hooks),
        },
        ...hooks.files,
      ],
      env: { [TOKEN_ENV]: '' },
      commands: [`codex mcp add engram --url '${shortMcpUrl(agent.serverUrl)}' --bearer-token-env-var ${TOKEN_ENV}`],
      notes: [
        'Codex sends ENGRAM_TOKEN as the bearer token to the provider (env_key) and to the MCP server (bearer_token_env_var).',
        'Codex asks you to review and trust new hooks when it starts (/hooks); `codex exec` runs them only with --dangerously-bypass-hook-trust. Hooks are experimental in Codex and not supported on every platform.',
        ...HOOK_NOTES,
      ],
    };
  },
};
