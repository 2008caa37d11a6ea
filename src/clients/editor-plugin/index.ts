/** A code editor's local plugin: one JSON file with the server, org, agent and token. */
import path from 'node:path';
import type { ConnectRecipe } from '../../connect/types.js';
import type { ClientProfile } from '../types.js';

export const TOKEN_PLACEHOLDER = '<ENGRAM_TOKEN>';

const recipe: ConnectRecipe = {
  summary: 'Plugins that read their settings from a file: api_url, org_id, agent_id and the token in ~/.config/engram/editor-plugin.json (mode 0600)',
  needsToken: true,
  plan(input) {
    const { agent, locations } = input;
    return {
      files: [
        {
          type: 'structured',
          path: path.join(locations.configHome, 'engram', 'editor-plugin.json'),
          format: 'json',
          purpose: 'the plugin settings; it holds the token, so it is kept mode 0600',
          secret: true,
          edits: [
            { kind: 'set', path: ['api_url'], value: agent.serverUrl },
            { kind: 'set', path: ['org_id'], value: agent.orgId },
            { kind: 'set', path: ['agent_id'], value: agent.id },
            { kind: 'set', path: ['token'], value: input.token ?? TOKEN_PLACEHOLDER },
          ],
        },
      ],
      notes: ['The plugin cannot read an environment variable, so this file holds the token in clear: it is written mode 0600 (owner only).'],
    };
  },
};

export const editorPlugin: ClientProfile = { id: 'editor-plugin', title: 'Editor plugin (JetBrains IDEs, Neovim)', connect: recipe };
