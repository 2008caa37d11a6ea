import type { AssembledAnswer, Turn } from '../../domain/transcript.js';
import { isObject, parseJsonOr, renderToolCall } from '../shared.js';
import { AnswerBudget, isPartIndex } from '../answer-budget.js';
import type { AnswerAssembler, AssemblerOptions, SseEvent } from '../types.js';

const FINAL_STOPS = new Set(['end_turn', 'stop_sequence']);

interface Block {
  type: string;
  text: string;
  name: string;
  input: string;
}

/** Assistant turn from content blocks; thinking is never kept for extraction. */
function answerTurns(blocks: Block[]): Turn[] {
  const parts = blocks
    .map((block) => {
      if (block.type === 'text') return block.text;
      if (block.type === 'tool_use' || block.type === 'server_tool_use') return renderToolCall(block.name, inputOf(block.input));
      return '';
    })
    .filter(Boolean);
  return parts.length > 0 ? [{ role: 'assistant', text: parts.join('\n') }] : [];
}

/**
 * A tool call's input as the client will send it back: an object (the streamed JSON text
 * parsed, spacing and all, the way the SDKs parse it), so the answer reads the same as
 * the assistant message that later repeats it (`answeredConversationId`, extraction).
 */
function inputOf(input: string): unknown {
  return input === '' ? {} : parseJsonOr(input, input);
}

function blockOf(raw: unknown): Block {
  const block = isObject(raw) ? raw : {};
  return {
    type: String(block.type ?? ''),
    text: typeof block.text === 'string' ? block.text : '',
    name: typeof block.name === 'string' ? block.name : '',
    input: isObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '',
  };
}

/**
 * Folds Messages stream events into the assistant's answer, keeping at most `maxBytes` of
 * its blocks' text and tool inputs (`AnswerBudget`); the stop reason is read to the end.
 */
export function createMessagesAssembler({ maxBytes }: AssemblerOptions = {}): AnswerAssembler {
  const budget = new AnswerBudget(maxBytes);
  const blocks: Block[] = [];
  let stopReason: string | null = null;
  let stopped = false;
  let errored = false;
  return {
    push(event: SseEvent) {
      const data = parseJsonOr(event.data, undefined);
      if (!isObject(data)) return;
      switch (data.type) {
        case 'error':
          errored = true;
          return;
        case 'content_block_start':
          if (isPartIndex(data.index)) {
            const block = blockOf(data.content_block);
            blocks[data.index] = { ...block, text: budget.take(block.text), input: budget.take(block.input) };
          }
          return;
        case 'content_block_delta': {
          const block = isPartIndex(data.index) ? blocks[data.index] : undefined;
          const delta = data.delta;
          if (!block || !isObject(delta)) return;
          if (delta.type === 'text_delta' && typeof delta.text === 'string') block.text += budget.take(delta.text);
          if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') block.input += budget.take(delta.partial_json);
          return;
        }
        case 'message_delta': {
          const delta = data.delta;
          if (isObject(delta) && typeof delta.stop_reason === 'string') stopReason = delta.stop_reason;
          return;
        }
        case 'message_stop':
          stopped = true;
      }
    },
    finish(): AssembledAnswer {
      const final = !errored && stopped && stopReason !== null && FINAL_STOPS.has(stopReason);
      const truncated = budget.truncation();
      return { final, stopReason, errored, turns: answerTurns(blocks.filter(Boolean)), ...(truncated ? { truncated } : {}) };
    },
  };
}

/** The same fold for a non-streaming `message` body. */
export function assembleMessagesJson(body: unknown): AssembledAnswer {
  if (!isObject(body) || body.type !== 'message' || !Array.isArray(body.content)) {
    return { final: false, stopReason: null, errored: true, turns: [] };
  }
  const stopReason = typeof body.stop_reason === 'string' ? body.stop_reason : null;
  return {
    final: stopReason !== null && FINAL_STOPS.has(stopReason),
    stopReason,
    errored: false,
    turns: answerTurns(body.content.map(blockOf)),
  };
}
