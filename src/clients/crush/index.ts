/**
 * Crush: Engram as an Anthropic-type provider (base_url is the server's, the one base URL
 * without its /v1: the SDK appends /v1/messages; the token says which agent) and the MCP server, in crush.json. Crush expands `$VAR` and
 * `$(...)` in values, so the token stays out of the file. Not verified with a running
 * Crush (it cannot be installed here); the shapes follow Crush's documentation.
 */
import path from 'node:path';
import { shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { TOKEN_ENV } from '../../connect/hooks.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import type { ClientProfile } from '../types.js';

/** The interface's provider-config example: a maximum context size of 128000. */
export const CRUSH_CONTEXT_WINDOW = 128_000;

const recipe: ConnectRecipe = {
  summary: 'Charm\'s terminal agent: an Anthropic-style provider and the memory tools in crush.json',
  baseUrlForm: 'anthropic',
  model: { family: 'anthropic', fallback: DEFAULT_MODEL.anthropic, inFiles: true },
  plan(input) {
    const { agent, locations } = input;
    const model = input.model ?? DEFAULT_MODEL.anthropic;
    return {
      files: [
        {
          type: 'structured',
          path: path.join(locations.configHome, 'crush', 'crush.json'),
          format: 'jsonc',
          purpose: 'Engram as the provider and large model, and its MCP server',
          edits: [
            { kind: 'set', path: ['$schema'], value: 'https://charm.land/crush.json' },
            {
              kind: 'set',
              path: ['providers', 'engram'],
              value: {
                name: 'Engram',
                type: 'anthropic',
                base_url: agent.serverUrl,
                api_key: `$${TOKEN_ENV}`,
                models: [{ id: model, name: model, context_window: CRUSH_CONTEXT_WINDOW, default_max_tokens: 8192 }],
              },
            },
            { kind: 'set', path: ['models', 'large'], value: { provider: 'engram', model } },
            {
              kind: 'set',
              path: ['mcp', 'engram'],
              value: { type: 'http', url: shortMcpUrl(agent.serverUrl), headers: { Authorization: `$(echo Bearer $${TOKEN_ENV})` } },
            },
          ],
        },
      ],
      env: { [TOKEN_ENV]: '' },
      notes: [
        `The model (${model}) must be one the agent's upstream serves; --model picks another.`,
        'Crush expands $ENGRAM_TOKEN and $(echo Bearer $ENGRAM_TOKEN) when it loads the file. Crush names the tools mcp_engram_recall, …',
        'Not verified with a running Crush: the entries follow its documented crush.json format.',
      ],
    };
  },
};

export const crush: ClientProfile = { id: 'crush', title: 'Crush', mcpTools: { prefix: (server) => `mcp_${server}_` }, connect: recipe };
