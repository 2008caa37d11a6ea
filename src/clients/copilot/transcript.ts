/**
 * GitHub Copilot CLI session events (`~/.copilot/session-state/<sessionId>/events.jsonl`):
 * every line `{type, data, id, timestamp, parentId}`. The conversation is `user.message`
 * (`data.content`, what the user typed; `transformedContent` adds Copilot's own context),
 * `assistant.message` (text and `toolRequests`) and `tool.execution_complete` (the
 * output). `system.message` is Copilot's system prompt, with the repository's custom
 * instructions (`.github/copilot-instructions.md`, `AGENTS.md`) in it: the session's
 * instructions, never conversation.
 */
import type { Turn } from '../../domain/transcript.js';
import { isObject, renderToolCall } from '../../protocols/shared.js';
import { instructionCollector } from '../../transcripts/instructions.js';
import type { TranscriptFormat, TranscriptMeta, TranscriptReader } from '../../transcripts/types.js';

export const copilotFormat: TranscriptFormat = {
  id: 'copilot',
  label: 'Copilot CLI events.jsonl',
  protocol: 'chat-completions',
  reader: createCopilotReader,
};

function createCopilotReader(): TranscriptReader {
  const meta: TranscriptMeta = { recognised: 0 };
  const instruct = instructionCollector(meta);
  return {
    read(record) {
      if (!isObject(record) || typeof record.type !== 'string' || !isObject(record.data)) return [];
      if (!/^[a-z_]+\.[a-z_.]+$/.test(record.type)) return [];
      meta.recognised++;
      const data = record.data;
      switch (record.type) {
        case 'session.start':
          if (typeof data.sessionId === 'string' && data.sessionId) meta.sessionId ??= data.sessionId;
          if (typeof data.selectedModel === 'string') meta.model = data.selectedModel;
          if (isObject(data.context) && typeof data.context.cwd === 'string' && data.context.cwd) meta.cwd ??= data.context.cwd;
          return [];
        case 'session.resume':
        case 'session.model_change':
          if (typeof data.selectedModel === 'string') meta.model = data.selectedModel;
          if (typeof data.newModel === 'string') meta.model = data.newModel;
          return [];
        case 'system.message':
          instruct(data.content);
          return [];
        case 'user.message':
          return text('user', data.content);
        case 'assistant.message': {
          if (typeof data.model === 'string') meta.model = data.model;
          const calls = Array.isArray(data.toolRequests) ? data.toolRequests.filter(isObject) : [];
          return [
            ...text('assistant', data.content),
            ...calls.map((call): Turn => ({ role: 'assistant', text: renderToolCall(String(call.name ?? ''), call.arguments) })),
          ];
        }
        case 'tool.execution_complete': {
          const result = isObject(data.result) ? data.result.content : undefined;
          const error = isObject(data.error) ? data.error.message : undefined;
          const output = typeof result === 'string' ? result : typeof error === 'string' ? error : '';
          return text('tool', data.success === false && output && !/fail|error/i.test(output) ? `${output}\n[failed]` : output);
        }
        default:
          return [];
      }
    },
    meta: () => meta,
  };
}

function text(role: Turn['role'], value: unknown): Turn[] {
  return typeof value === 'string' && value.trim() !== '' ? [{ role, text: value }] : [];
}
