/**
 * Claude Code (CLIENTS.md): the session in `x-claude-code-session-id` and in
 * `metadata.user_id`; the working directory in its `<env>` block (the generic "Working
 * directory:" form), and its auto-memory folder `~/.claude/projects/<key>/memory/` (its
 * transcripts' folder too), keyed by the git root, every character but letters and digits
 * made `-`; CLAUDE.md in a `<system-reminder>` among the user's messages.
 */
import { isObject } from '../../protocols/shared.js';
import type { ClientProfile } from '../types.js';
import { recipe } from './connect.js';
import { hooks } from './hooks.js';
import { claudeCodeFormat } from './transcript.js';

/** `metadata.user_id`: JSON with `session_id`, or the older `..._session_<uuid>` string. */
function sessionFromUserId(userId: string): string | undefined {
  if (userId.startsWith('{')) {
    try {
      const parsed = JSON.parse(userId) as { session_id?: unknown };
      return typeof parsed.session_id === 'string' && parsed.session_id ? parsed.session_id : undefined;
    } catch {
      return undefined;
    }
  }
  const match = /session_([0-9a-f-]{8,})/i.exec(userId);
  return match ? match[1] : undefined;
}

export const claudeCode: ClientProfile = {
  id: 'claude-code',
  title: 'Claude Code',
  session: {
    headers: ['x-claude-code-session-id'],
    body: {
      protocols: ['messages'],
      read: ({ metadata }) => (isObject(metadata) && typeof metadata.user_id === 'string' ? sessionFromUserId(metadata.user_id) : undefined),
    },
  },
  place: {
    needles: ['jects'],
    mentions: ['projects'],
    projectKey: { pattern: /\.claude[/\\]projects[/\\]([A-Za-z0-9-]+)[/\\]/g, of: (path) => path.replace(/[^A-Za-z0-9]/g, '-') },
  },
  isInstructionFile: (text) => /^\s*<system-reminder>/.test(text) && /# claudeMd|CLAUDE\.md|AGENTS\.md/.test(text),
  mcpTools: { prefix: (server) => `mcp__${server}__` },
  transcript: { ...claudeCodeFormat, routes: ['claude', 'claude-code'] },
  hooks,
  connect: recipe,
};
