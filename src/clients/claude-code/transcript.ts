/**
 * Claude Code transcripts (`~/.claude/projects/<project>/<sessionId>.jsonl`): every line
 * has a `type` and the `sessionId`. The conversation is in the `user` lines (a typed
 * prompt, or tool results) and the `assistant` lines (one line per content block). Every
 * other type is what Claude Code injected or its bookkeeping (`attachment` with CLAUDE.md
 * and the environment, `api-request-*`, `queue-operation`, ...) and is not read as turns
 * (the CLAUDE.md files are read as the session's instructions); neither
 * are sub-agent lines, meta lines (local command output) and compaction summaries, which
 * repeat what the conversation already said.
 */
import type { Turn } from '../../domain/transcript.js';
import { messageTurns } from '../../protocols/messages/adapter.js';
import { isObject } from '../../protocols/shared.js';
import type { TranscriptFormat, TranscriptMeta, TranscriptReader } from '../../transcripts/types.js';
import { instructionCollector } from '../../transcripts/instructions.js';

/** Slash commands and their output, written as user messages. */
const LOCAL_COMMAND = /^\s*<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>/;

export const claudeCodeFormat: TranscriptFormat = {
  id: 'claude-code',
  label: 'Claude Code transcript',
  protocol: 'messages',
  reader: createClaudeCodeReader,
};

function createClaudeCodeReader(): TranscriptReader {
  const meta: TranscriptMeta = { recognised: 0 };
  const instruct = instructionCollector(meta);
  return {
    read(record) {
      if (!isObject(record) || typeof record.type !== 'string') return [];
      // CLAUDE.md and the other instruction files, as Claude Code attached them: the session's instructions.
      if (record.type === 'attachment' && isObject(record.attachment) && record.attachment.type === 'instructions' && Array.isArray(record.attachment.files)) {
        for (const file of record.attachment.files) if (isObject(file)) instruct(file.content);
      }
      if (typeof record.sessionId === 'string' && record.sessionId) {
        meta.recognised++;
        meta.sessionId ??= record.sessionId;
        if (typeof record.cwd === 'string' && record.cwd) meta.cwd ??= record.cwd;
      } else if (record.type === 'summary' && typeof record.leafUuid === 'string') {
        meta.recognised++;
        return [];
      }
      if (record.type === 'api-request' && isObject(record.params) && typeof record.params.model === 'string') {
        meta.model ??= record.params.model;
      }
      if ((record.type !== 'user' && record.type !== 'assistant') || !isObject(record.message)) return [];
      if (record.isSidechain === true || record.isMeta === true || record.isCompactSummary === true) return [];
      const message = record.message;
      if (record.type === 'assistant' && typeof message.model === 'string' && !message.model.startsWith('<')) {
        meta.model = message.model;
      }
      return messageTurns({ ...message, role: record.type }).filter(
        (turn: Turn) => turn.text.trim() !== '' && !(turn.role === 'user' && LOCAL_COMMAND.test(turn.text)),
      );
    },
    meta: () => meta,
  };
}
