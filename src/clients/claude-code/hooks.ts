import type { HookProfile } from '../types.js';

/** Claude Code's SessionStart and Stop hooks (settings.json); its hook input is snake_case. */
export const hooks: HookProfile = {
  prefix: 'claude-code',
  clientTitle: 'Claude Code',
  format: 'claude',
  stopPath: '/transcripts/claude',
  transcriptField: '.transcript_path',
  sessionField: '.session_id',
  answer: 'hookSpecificOutput',
};
