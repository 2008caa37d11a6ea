import type { HookProfile } from '../types.js';

/**
 * Codex's SessionStart and Stop hooks. Codex 0.169 rejects a SessionStart answer with keys
 * beyond its schema (Copilot's form fails), so its script asks for `?format=codex`, Claude's shape.
 */
export const hooks: HookProfile = {
  prefix: 'codex',
  clientTitle: 'Codex',
  format: 'codex',
  stopPath: '/transcripts/codex',
  transcriptField: '.transcript_path',
  sessionField: '.session_id',
  answer: 'hookSpecificOutput',
};
