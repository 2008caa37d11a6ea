import type { HookProfile } from '../types.js';

/**
 * Copilot CLI's sessionStart and agentStop hooks (camelCase input). The session-start
 * endpoint answers in its form when no format is asked: the top-level `additionalContext`,
 * with the index's counts beside it.
 */
export const hooks: HookProfile = {
  prefix: 'copilot',
  clientTitle: 'Copilot CLI',
  format: 'copilot',
  defaultForm: true,
  stopPath: '/copilot/stop',
  transcriptField: '.transcriptPath',
  sessionField: '.sessionId',
  answer: 'additionalContext',
};
