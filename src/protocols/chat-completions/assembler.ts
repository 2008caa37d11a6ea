import type { AssembledAnswer, Turn } from '../../domain/transcript.js';
import { isObject, parseJsonOr, renderToolCall } from '../shared.js';
import { AnswerBudget, isPartIndex } from '../answer-budget.js';
import type { AnswerAssembler, AssemblerOptions, SseEvent } from '../types.js';

interface PendingCall {
  name: string;
  arguments: string;
}

function answerTurns(text: string, calls: PendingCall[]): Turn[] {
  const parts = [text, ...calls.map((call) => renderToolCall(call.name, call.arguments))].filter(Boolean);
  return parts.length > 0 ? [{ role: 'assistant', text: parts.join('\n') }] : [];
}

/**
 * Folds `chat.completion.chunk` events (first choice) into the assistant's answer, keeping
 * at most `maxBytes` of its text and tool calls (`AnswerBudget`); the stop reason is read to
 * the end.
 */
export function createChatAssembler({ maxBytes }: AssemblerOptions = {}): AnswerAssembler {
  const budget = new AnswerBudget(maxBytes);
  let text = '';
  const calls: PendingCall[] = [];
  let stopReason: string | null = null;
  let errored = false;
  let done = false;
  return {
    push(event: SseEvent) {
      if (event.data === '[DONE]') {
        done = true;
        return;
      }
      const chunk = parseJsonOr(event.data, undefined);
      if (!isObject(chunk)) return;
      if (chunk.error !== undefined) {
        errored = true;
        return;
      }
      const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => isObject(c) && (c.index ?? 0) === 0) : undefined;
      if (!isObject(choice)) return;
      if (typeof choice.finish_reason === 'string') stopReason = choice.finish_reason;
      const delta = choice.delta;
      if (!isObject(delta)) return;
      if (typeof delta.content === 'string') text += budget.take(delta.content);
      if (Array.isArray(delta.tool_calls)) {
        for (const call of delta.tool_calls) {
          if (!isObject(call)) continue;
          const index = typeof call.index === 'number' ? call.index : calls.length;
          if (!isPartIndex(index)) continue;
          const slot = (calls[index] ??= { name: '', arguments: '' });
          const fn = isObject(call.function) ? call.function : {};
          if (typeof fn.name === 'string') slot.name += budget.take(fn.name);
          if (typeof fn.arguments === 'string') slot.arguments += budget.take(fn.arguments);
        }
      }
    },
    finish(): AssembledAnswer {
      const final = !errored && stopReason === 'stop' && calls.length === 0;
      const truncated = budget.truncation();
      return {
        final: final && (done || stopReason !== null),
        stopReason,
        errored,
        turns: answerTurns(text, calls.filter(Boolean)),
        ...(truncated ? { truncated } : {}),
      };
    },
  };
}

/** The same fold for a non-streaming `chat.completion` body. */
export function assembleChatJson(body: unknown): AssembledAnswer {
  const choice = isObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isObject(choice) || !isObject(choice.message)) return { final: false, stopReason: null, errored: true, turns: [] };
  const message = choice.message;
  const calls: PendingCall[] = Array.isArray(message.tool_calls)
    ? message.tool_calls.filter(isObject).map((call) => {
        const fn = isObject(call.function) ? call.function : {};
        return { name: String(fn.name ?? ''), arguments: String(fn.arguments ?? '') };
      })
    : [];
  const text = typeof message.content === 'string' ? message.content : '';
  const stopReason = typeof choice.finish_reason === 'string' ? choice.finish_reason : null;
  return { final: stopReason === 'stop' && calls.length === 0, stopReason, errored: false, turns: answerTurns(text, calls) };
}
