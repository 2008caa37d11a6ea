import type { AssembledAnswer } from '../../domain/transcript.js';
import { isObject, parseJsonOr } from '../shared.js';
import { AnswerBudget, isPartIndex } from '../answer-budget.js';
import type { AnswerAssembler, AssemblerOptions, JsonObject, SseEvent } from '../types.js';
import { itemTurns, waitsForClient } from './items.js';

/**
 * What an answer means for the conversation: final when the response completed and no
 * output item waits for the client; `incomplete` (cut by a token limit) is not final.
 * The response itself is kept, so a later request can chain from it.
 */
function answerOf(response: JsonObject | undefined, fallbackOutput: unknown[], errored: boolean): AssembledAnswer {
  const status = typeof response?.status === 'string' ? response.status : null;
  const output = Array.isArray(response?.output) ? response.output : fallbackOutput;
  const waits = output.some(waitsForClient);
  const completed = status === 'completed';
  const answer: AssembledAnswer = {
    final: !errored && completed && !waits,
    stopReason: waits && completed ? 'tool_calls' : status,
    errored: errored || status === 'failed',
    turns: itemTurns(output),
  };
  if (response && typeof response.id === 'string' && (completed || status === 'incomplete') && !errored) {
    answer.response = { id: response.id, body: response, output };
  }
  return answer;
}

/**
 * Folds Responses stream events into the answer. `response.completed` carries the whole
 * response (one event, bounded by `ENGRAM_SSE_MAX_EVENT_BYTES`); the items seen in
 * `response.output_item.done` stand in when it is missing, kept while their events fit
 * `maxBytes` together (`AnswerBudget`). Deltas are not assembled: the items repeat them.
 */
export function createResponsesAssembler({ maxBytes }: AssemblerOptions = {}): AnswerAssembler {
  const budget = new AnswerBudget(maxBytes);
  const items: unknown[] = [];
  let response: JsonObject | undefined;
  let errored = false;
  return {
    push(event: SseEvent) {
      const data = parseJsonOr(event.data, undefined);
      if (!isObject(data)) return;
      switch (data.type) {
        case 'error':
        case 'response.failed':
          errored = true;
          return;
        case 'response.output_item.done':
          if (isPartIndex(data.output_index) && budget.fits(Buffer.byteLength(event.data, 'utf8'))) items[data.output_index] = data.item;
          return;
        case 'response.completed':
        case 'response.incomplete':
          if (isObject(data.response)) response = data.response;
      }
    },
    finish() {
      const answer = answerOf(response, items.filter(Boolean), errored);
      // The whole response came at the end: the items left out are in it.
      const truncated = response ? undefined : budget.truncation();
      return truncated ? { ...answer, truncated } : answer;
    },
  };
}

/** The same fold for a non-streaming `response` body. */
export function assembleResponsesJson(body: unknown): AssembledAnswer {
  if (!isObject(body) || body.object !== 'response') return { final: false, stopReason: null, errored: true, turns: [] };
  return answerOf(body, [], false);
}
