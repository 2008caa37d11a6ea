/**
 * opencode: Engram as an Anthropic-style provider (`@ai-sdk/anthropic`, whose baseURL
 * includes `/v1`) and the MCP server, in opencode.json(c). opencode substitutes
 * `{env:ENGRAM_TOKEN}`, so the token stays out of the file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shortBaseUrl, shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { TOKEN_ENV } from '../../connect/hooks.js';
import { DEFAULT_MODEL } from '../../connect/models.js';
import type { ClientProfile } from '../types.js';

const recipe: ConnectRecipe = {
  summary: 'The open-source terminal agent: an Anthropic-style provider and the memory tools in opencode.json',
  model: { family: 'anthropic', fallback: DEFAULT_MODEL.anthropic, inFiles: true },
  plan(input) {
    const { agent, locations } = input;
    const model = input.model ?? DEFAULT_MODEL.anthropic;
    const dir = path.join(locations.configHome, 'opencode');
    // opencode reads either name; edit the one the user already has.
    const jsonc = path.join(dir, 'opencode.jsonc');
    const file = fs.existsSync(jsonc) ? jsonc : path.join(dir, 'opencode.json');
    return {
      files: [
        {
          type: 'structured',
          path: file,
          format: 'jsonc',
          purpose: 'Engram as the provider and default model, and its MCP server',
          edits: [
            { kind: 'set', path: ['$schema'], value: 'https://opencode.ai/config.json' },
            {
              kind: 'set',
              path: ['provider', 'engram'],
              value: {
                npm: '@ai-sdk/anthropic',
                name: 'Engram',
                options: { baseURL: shortBaseUrl(agent.serverUrl), apiKey: `{env:${TOKEN_ENV}}` },
                models: { [model]: { name: model } },
              },
            },
            { kind: 'set', path: ['model'], value: `engram/${model}` },
            {
              kind: 'set',
              path: ['mcp', 'engram'],
              value: { type: 'remote', url: shortMcpUrl(agent.serverUrl), headers: { Authorization: `Bearer {env:${TOKEN_ENV}}` } },
            },
          ],
        },
      ],
      env: { [TOKEN_ENV]: '' },
      notes: [
        `The model (${model}) must be one the agent's upstream serves; --model picks another.`,
        'opencode replaces {env:ENGRAM_TOKEN} with the variable when it loads the file, so the token is not written into it. `opencode mcp list` shows engram connected.',
      ],
    };
  },
};

export const opencode: ClientProfile = { id: 'opencode', title: 'opencode', mcpTools: { prefix: (server) => `${server}_` }, connect: recipe };
