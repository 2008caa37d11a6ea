import { claudeCodeFormat } from './claude-code.js';
import { codexFormat } from './codex.js';
import { copilotFormat } from './copilot.js';
import type { TranscriptFormat, TranscriptFormatId } from './types.js';

export const TRANSCRIPT_FORMATS: Readonly<Record<TranscriptFormatId, TranscriptFormat>> = {
  codex: codexFormat,
  'claude-code': claudeCodeFormat,
  copilot: copilotFormat,
};

export type { TranscriptFormat, TranscriptFormatId } from './types.js';
