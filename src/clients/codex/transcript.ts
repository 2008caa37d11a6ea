/**
 * Codex CLI rollout files (`~/.codex/sessions/.../rollout-*.jsonl`), in both formats:
 * - current: every line `{timestamp, type, payload}`; the conversation is in the
 *   `response_item` lines (Responses API items), the session id in `session_meta`, the
 *   model in `turn_context`. `event_msg` lines repeat those items for the UI and
 *   `compacted` lines repeat earlier history: neither is read, so nothing counts twice.
 * - old (before the wrapper): a first line `{id, timestamp, instructions}`, bare items,
 *   and `{"record_type": "state"}` lines.
 * Codex writes what it injects (AGENTS.md, environment context, developer instructions,
 * hook context) as developer or user messages; only what the user typed is kept as turns,
 * and its developer messages and AGENTS.md as the session's instructions.
 */
import type { Turn } from '../../domain/transcript.js';
import { contentText, itemTurn } from '../../protocols/responses/items.js';
import { isObject } from '../../protocols/shared.js';
import type { JsonObject } from '../../protocols/types.js';
import type { TranscriptFormat, TranscriptMeta, TranscriptReader } from '../../transcripts/types.js';
import { instructionCollector } from '../../transcripts/instructions.js';

const WRAPPED = new Set(['session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted', 'world_state', 'token_usage_record']);
/** Response item types of the old format's bare lines. */
const ITEM_TYPES = new Set([
  'message',
  'reasoning',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'local_shell_call',
  'local_shell_call_output',
  'web_search_call',
  'compaction',
]);
/** Injected user-role parts, for rollouts written before Codex recorded each part's provenance. */
const INJECTED_PREFIXES = ['<environment_context>', '<user_instructions>', '# AGENTS.md instructions for', '<INSTRUCTIONS>', '<user_shell_command>'];

/** Codex's AGENTS.md as it sends it: a user message `# AGENTS.md instructions for <dir>` (`<user_instructions>` in older versions). */
export function isInstructionFile(text: string): boolean {
  return /^\s*(?:# AGENTS\.md instructions for |<user_instructions>)/.test(text);
}

export const codexFormat: TranscriptFormat = {
  id: 'codex',
  label: 'Codex rollout',
  protocol: 'responses',
  reader: createCodexReader,
};

function createCodexReader(): TranscriptReader {
  const meta: TranscriptMeta = { recognised: 0 };
  let lines = 0;
  const instruct = instructionCollector(meta);
  /** The instruction texts of an item: a developer or system message, an AGENTS.md part of a user message. */
  const instructionsOf = (item: JsonObject) => {
    if (item.type !== 'message' && item.type !== undefined) return;
    if (item.role === 'developer' || item.role === 'system') instruct(contentText(item.content));
    else if (item.role === 'user') {
      const parts = Array.isArray(item.content) ? item.content : [item.content];
      for (const part of parts) {
        const text = typeof part === 'string' ? part : isObject(part) ? part.text : undefined;
        if (typeof text === 'string' && isInstructionFile(text)) instruct(text);
      }
    }
  };
  return {
    read(record) {
      lines++;
      if (!isObject(record)) return [];
      if (typeof record.type === 'string' && WRAPPED.has(record.type) && isObject(record.payload)) {
        meta.recognised++;
        const payload = record.payload;
        if (record.type === 'session_meta') {
          const id = payload.id ?? payload.session_id;
          if (typeof id === 'string' && id) meta.sessionId ??= id;
          if (typeof payload.model === 'string') meta.model ??= payload.model;
          if (typeof payload.cwd === 'string' && payload.cwd) meta.cwd ??= payload.cwd;
        } else if (record.type === 'turn_context' && typeof payload.model === 'string') {
          meta.model = payload.model;
        } else if (record.type === 'response_item') {
          instructionsOf(payload);
          return itemTurns(payload);
        }
        return [];
      }
      if (record.record_type !== undefined) {
        meta.recognised++;
        return [];
      }
      if (lines === 1 && typeof record.id === 'string' && typeof record.timestamp === 'string' && record.type === undefined) {
        meta.recognised++;
        meta.sessionId ??= record.id;
        instruct(record.instructions);
        return [];
      }
      if (typeof record.type === 'string' && ITEM_TYPES.has(record.type)) {
        meta.recognised++;
        instructionsOf(record);
        return itemTurns(record);
      }
      return [];
    },
    meta: () => meta,
  };
}

function itemTurns(item: JsonObject): Turn[] {
  if (item.type === 'message' || item.type === undefined) {
    if (item.role !== 'user') return single(item.role === 'assistant' ? itemTurn(item) : undefined);
    return single(itemTurn({ ...item, content: typedParts(item) }, isInstructionFile));
  }
  if (item.type === 'function_call_output' && typeof item.output === 'string') {
    // The old format wraps a shell's output as JSON: `{"output": "...", "metadata": {"exit_code": 1}}`.
    return single(itemTurn({ ...item, output: unwrapShellOutput(item.output) }));
  }
  return single(itemTurn(item));
}

function single(turn: Turn | undefined): Turn[] {
  return turn && turn.text.trim() !== '' ? [turn] : [];
}

/** The parts of a user message the user typed: by recorded provenance, else by their opening. */
function typedParts(item: JsonObject): unknown[] {
  const parts = Array.isArray(item.content) ? item.content : typeof item.content === 'string' ? [{ type: 'input_text', text: item.content }] : [];
  const passthrough = isObject(item.internal_chat_message_metadata_passthrough) ? item.internal_chat_message_metadata_passthrough : undefined;
  const provenance = Array.isArray(passthrough?.content_item_metadata) ? passthrough.content_item_metadata : undefined;
  return parts.filter((part, index) => {
    const origin = provenance?.[index];
    if (isObject(origin) && isObject(origin.provenance) && typeof origin.provenance.type === 'string') {
      return origin.provenance.type === 'user';
    }
    const text = isObject(part) && typeof part.text === 'string' ? part.text.trimStart() : '';
    return !INJECTED_PREFIXES.some((prefix) => text.startsWith(prefix));
  });
}

function unwrapShellOutput(output: string): string {
  if (!output.startsWith('{')) return output;
  try {
    const parsed = JSON.parse(output) as { output?: unknown; metadata?: { exit_code?: unknown } };
    if (typeof parsed.output !== 'string') return output;
    const code = parsed.metadata?.exit_code;
    return typeof code === 'number' && code !== 0 ? `${parsed.output}\n[exit code ${code}]` : parsed.output;
  } catch {
    return output;
  }
}
