/**
 * GitHub Copilot CLI (CLIENTS.md): no session header, but its system prompt names the
 * session's folder (`~/.copilot/session-state/<id>`), the id its `events.jsonl` carries;
 * "Current working directory:" (the generic form) and "Git repository root:" in its
 * system prompt.
 */
import { isObject } from '../../protocols/shared.js';
import type { ClientProfile } from '../types.js';
import { recipe } from './connect.js';
import { hooks } from './hooks.js';
import { copilotFormat } from './transcript.js';

const SESSION_FOLDER = /\.copilot\/session-state\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/;

/** The session id in a system prompt: a string, or parts whose texts are read joined. */
function copilotSessionId(system: unknown): string | undefined {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? system.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join('\n') : '';
  return SESSION_FOLDER.exec(text)?.[1];
}

export const copilot: ClientProfile = {
  id: 'copilot',
  title: 'GitHub Copilot CLI',
  session: {
    body: { protocols: ['messages', 'chat-completions', 'responses'], read: (body, adapter) => copilotSessionId(adapter.systemPrompt(body)) },
  },
  place: {
    needles: ['y root'],
    mentions: ['repository root'],
    root: /git repository root:\s*([^\n\r<]+)/gi,
  },
  mcpTools: { prefix: (server) => `${server}-` },
  transcript: { ...copilotFormat, routes: ['copilot'] },
  hooks,
  connect: recipe,
};
