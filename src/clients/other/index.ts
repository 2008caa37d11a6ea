/** Any other tool: the base URLs per protocol (the one base URL first), the MCP URL, the hooks and the token header forms. */
import { shortBaseUrl, shortMcpUrl } from '../../domain/base-urls.js';
import type { ConnectRecipe } from '../../connect/types.js';
import { SESSION_START_PATH, TOKEN_ENV, type HookSpec } from '../../connect/hooks.js';
import type { ClientProfile } from '../types.js';

/** `hooks`: the other kinds' hooks, whose endpoints it lists (their session-start formats alphabetically). */
const recipe = (hooks: readonly HookSpec[]): ConnectRecipe => ({
  summary: 'Every address Engram serves (chat completions, Messages, Responses, MCP, hooks) and the headers that carry the token',
  plan(input) {
    const { agent } = input;
    const base = agent.baseUrl;
    const server = agent.serverUrl;
    const formats = hooks.flatMap(({ format, defaultForm }) => (defaultForm ? [] : [`?format=${format}`])).sort();
    const text = `One base URL for every agent (the token says which):
Messages (Anthropic-style) base URL     ${server}            (the client appends /v1/messages)
Chat completions base URL               ${shortBaseUrl(server)}         (the client appends /chat/completions)
Responses base URL                      ${shortBaseUrl(server)}         (the client appends /responses; WebSocket too)
MCP server (Streamable HTTP)            ${shortMcpUrl(server)}

The agent's own base URL serves the same (append /v1 as above), and the hooks:
Agent base URL                          ${base}
Agent MCP server                        ${agent.mcpUrl}
Session-start hook (POST, JSON)         ${base}${SESSION_START_PATH}   (${formats.join(', ')})
Transcript upload (POST, raw file)      ${hooks.map(({ stopPath }) => `${base}${stopPath}`).join(', ')}

Send the token as any one of:
  Authorization: Bearer $${TOKEN_ENV}
  X-Engram-Api-Key: $${TOKEN_ENV}
  x-api-key: $${TOKEN_ENV}
The MCP server and the hook endpoints take only Authorization: Bearer.
`;
    return {
      env: { [TOKEN_ENV]: '' },
      snippets: [{ title: 'Endpoints and token headers', language: 'text', text }],
      notes: [
        'Where a tool has an API-key field, put the token there (or a reference to ENGRAM_TOKEN, if the tool expands variables).',
        'Register the MCP server under the name engram: Engram detects its tools by that name and then adds the memory index and reminders.',
      ],
    };
  },
});

/** Any other tool, shown the endpoints of the `kinds` before it. */
export const other = (kinds: readonly ClientProfile[]): ClientProfile => ({ id: 'other', title: 'Any other tool', connect: recipe(kinds.flatMap(({ hooks }) => (hooks ? [hooks] : []))) });
