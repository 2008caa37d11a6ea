import { CREATED, contentText, fragments, hashId, openaiErrorType, outputTokens, textDeltas } from './shared.js';
import type { Answer, AnswerContext, ProtocolResponder, SseEvent } from './types.js';

const FINGERPRINT = 'fp_scripted';

function ids(answer: Answer, ctx: AnswerContext): { completion: string; call: string } {
  const hash = hashId('chat-completions', ctx.model, JSON.stringify(answer));
  const call = answer.type === 'tool_call' ? answer.id ?? `call_${hashId('call', answer.name, JSON.stringify(answer.arguments))}` : '';
  return { completion: `chatcmpl-${hash}`, call };
}

function usage(answer: Answer, ctx: AnswerContext) {
  const completion = outputTokens(answer);
  return {
    prompt_tokens: ctx.inputTokens,
    completion_tokens: completion,
    total_tokens: ctx.inputTokens + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function finishReason(answer: Answer): 'stop' | 'tool_calls' {
  return answer.type === 'tool_call' ? 'tool_calls' : 'stop';
}

function body(answer: Answer, ctx: AnswerContext): unknown {
  const { completion, call } = ids(answer, ctx);
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: answer.text ?? null,
    refusal: null,
    annotations: [],
  };
  if (answer.type === 'tool_call') {
    message.tool_calls = [{ id: call, type: 'function', function: { name: answer.name, arguments: JSON.stringify(answer.arguments) } }];
  }
  return {
    id: completion,
    object: 'chat.completion',
    created: CREATED,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(answer) }],
    usage: usage(answer, ctx),
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
}

function events(answer: Answer, ctx: AnswerContext): SseEvent[] {
  const { completion, call } = ids(answer, ctx);
  // With include_usage every chunk carries `usage: null` and a last chunk with no choices carries the totals.
  const envelope = {
    id: completion,
    object: 'chat.completion.chunk',
    created: CREATED,
    model: ctx.model,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): SseEvent => ({
    data: JSON.stringify({
      ...envelope,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(ctx.includeUsage ? { usage: null } : {}),
    }),
  });
  const out: SseEvent[] = [];
  const text = answer.text;
  if (answer.type === 'text' || text) {
    out.push(chunk({ role: 'assistant', content: '', refusal: null }));
    for (const piece of textDeltas(text ?? '')) out.push(chunk({ content: piece }));
  }
  if (answer.type === 'tool_call') {
    const header = { index: 0, id: call, type: 'function', function: { name: answer.name, arguments: '' } };
    out.push(chunk(text ? { tool_calls: [header] } : { role: 'assistant', content: null, tool_calls: [header], refusal: null }));
    for (const piece of fragments(JSON.stringify(answer.arguments), 3)) {
      out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
  }
  out.push(chunk({}, finishReason(answer)));
  if (ctx.includeUsage) {
    out.push({
      data: JSON.stringify({ ...envelope, choices: [], usage: usage(answer, ctx) }),
    });
  }
  out.push({ data: '[DONE]' });
  return out;
}

function errorEnvelope(status: number, message: string) {
  const { type, code } = openaiErrorType(status);
  return { error: { message, type, param: null, code } };
}

/** OpenAI Chat Completions, as api.openai.com plays it. */
export const chatCompletions: ProtocolResponder = {
  protocol: 'chat-completions',
  toolNames(req) {
    const tools: unknown[] = Array.isArray(req?.tools) ? req.tools : [];
    return tools.flatMap((tool: any) => (typeof tool?.function?.name === 'string' ? [tool.function.name] : []));
  },
  userTexts(req) {
    const messages: any[] = Array.isArray(req?.messages) ? req.messages : [];
    return messages.filter((m) => m?.role === 'user').map((m) => contentText(m.content));
  },
  body,
  events,
  errorBody: (status, message) => errorEnvelope(status, message),
  streamError: (status, message) => ({ data: JSON.stringify(errorEnvelope(status, message)) }),
  headers: (requestId) => ({ 'x-request-id': requestId, 'openai-processing-ms': '1' }),
};

/** OpenAI's answer to a route it does not have. */
export function notFoundBody(method: string, path: string): unknown {
  return { error: { message: `Invalid URL (${method} ${path})`, type: 'invalid_request_error', param: null, code: null } };
}
