import { createHash } from 'node:crypto';
import { anthropicErrorType, contentText, fragments, hashId, outputTokens, stringLength, textDeltas, tokensFor } from './shared.js';
import type { Answer, AnswerContext, ProtocolResponder, ReplyOptions, SseEvent } from './types.js';

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function thinkingOf(answer: Answer): string {
  return answer.type === 'text' ? answer.thinking ?? '' : '';
}

/** A deterministic stand-in for the opaque signature the API attaches to thinking. */
function signature(thinking: string): string {
  return createHash('sha256').update(`scripted-signature\u0000${thinking}`).digest('base64');
}

function blocks(answer: Answer): Block[] {
  const out: Block[] = [];
  const thinking = thinkingOf(answer);
  if (thinking) out.push({ type: 'thinking', thinking, signature: signature(thinking) });
  if (answer.type === 'text' || answer.text) out.push({ type: 'text', text: answer.text ?? '' });
  if (answer.type === 'tool_call') {
    const id = answer.id ?? `toolu_${hashId('toolu', answer.name, JSON.stringify(answer.arguments))}`;
    out.push({ type: 'tool_use', id, name: answer.name, input: answer.arguments });
  }
  return out;
}

function messageId(answer: Answer, ctx: AnswerContext): string {
  return `msg_${hashId('messages', ctx.model, JSON.stringify(answer))}`;
}

function stopReason(answer: Answer): 'end_turn' | 'tool_use' {
  return answer.type === 'tool_call' ? 'tool_use' : 'end_turn';
}

function usage(input: number, output: number, ctx?: AnswerContext) {
  const written = ctx?.cacheWriteTokens ?? 0;
  return {
    input_tokens: input,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: ctx?.cacheReadTokens ?? 0,
    cache_creation: { ephemeral_5m_input_tokens: written, ephemeral_1h_input_tokens: 0 },
    output_tokens: output,
    service_tier: 'standard',
  };
}

function message(answer: Answer, ctx: AnswerContext, content: Block[], done: boolean) {
  return {
    id: messageId(answer, ctx),
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    stop_reason: done ? stopReason(answer) : null,
    stop_sequence: null,
    usage: usage(ctx.inputTokens, done ? outputTokens(answer, thinkingOf(answer)) : 1, ctx),
  };
}

function event(type: string, payload: Record<string, unknown> = {}): SseEvent {
  return { event: type, data: JSON.stringify({ type, ...payload }) };
}

const PING: SseEvent = { event: 'ping', data: JSON.stringify({ type: 'ping' }) };

function blockEvents(block: Block, index: number): SseEvent[] {
  const delta = (d: Record<string, unknown>) => event('content_block_delta', { index, delta: d });
  switch (block.type) {
    case 'thinking':
      return [
        event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        ...textDeltas(block.thinking).map((thinking) => delta({ type: 'thinking_delta', thinking })),
        delta({ type: 'signature_delta', signature: block.signature }),
        event('content_block_stop', { index }),
      ];
    case 'text':
      return [
        event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
        ...textDeltas(block.text).map((text) => delta({ type: 'text_delta', text })),
        event('content_block_stop', { index }),
      ];
    case 'tool_use':
      // The API opens with an empty partial_json, then streams the input in fragments.
      return [
        event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }),
        delta({ type: 'input_json_delta', partial_json: '' }),
        ...fragments(JSON.stringify(block.input), 3).map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
        event('content_block_stop', { index }),
      ];
  }
}

/** Pings: the real API's single one after the first block opens, or one after every N events. */
function withPings(events: SseEvent[], options: ReplyOptions): SseEvent[] {
  const every = options.pingEvery;
  if (every === undefined || every <= 0) {
    const at = events.findIndex((e) => e.event === 'content_block_start');
    return at < 0 ? events : [...events.slice(0, at + 1), PING, ...events.slice(at + 1)];
  }
  const out: SseEvent[] = [];
  events.forEach((e, i) => {
    out.push(e);
    if ((i + 1) % every === 0 && i + 1 < events.length) out.push(PING);
  });
  return out;
}

function events(answer: Answer, ctx: AnswerContext, options: ReplyOptions): SseEvent[] {
  const all = [
    event('message_start', { message: message(answer, ctx, [], false) }),
    ...blocks(answer).flatMap(blockEvents),
    event('message_delta', {
      delta: { stop_reason: stopReason(answer), stop_sequence: null },
      usage: { output_tokens: outputTokens(answer, thinkingOf(answer)) },
    }),
    event('message_stop'),
  ];
  return withPings(all, options);
}

function errorEnvelope(status: number, message: string) {
  return { type: 'error', error: { type: anthropicErrorType(status), message } };
}

/** Anthropic Messages, as api.anthropic.com plays it. */
export const messages: ProtocolResponder = {
  protocol: 'messages',
  toolNames(req) {
    const tools: unknown[] = Array.isArray(req?.tools) ? req.tools : [];
    return tools.flatMap((tool: any) => (typeof tool?.name === 'string' ? [tool.name] : []));
  },
  userTexts(req) {
    const list: any[] = Array.isArray(req?.messages) ? req.messages : [];
    return list.filter((m) => m?.role === 'user').map((m) => contentText(m.content));
  },
  body: (answer, ctx) => message(answer, ctx, blocks(answer), true),
  events,
  errorBody: (status, message, requestId) => ({ ...errorEnvelope(status, message), request_id: requestId }),
  streamError: (status, message) => ({ event: 'error', data: JSON.stringify(errorEnvelope(status, message)) }),
  headers: (requestId) => ({ 'request-id': requestId }),
};

/**
 * Anthropic's prompt cache, as the API reports it: the prefix a `cache_control` block of
 * `system` ends (the tools, then `system` up to that block) is written to the cache the
 * first time and read from it after (`seen` holds the prefixes written). Its tokens are
 * then counted apart from `input_tokens`.
 */
export function promptCache(body: any, seen: Set<string>): { read: number; written: number; tokens: number } {
  const system: unknown[] = Array.isArray(body?.system) ? body.system : [];
  let end = system.length - 1;
  while (end >= 0 && (system[end] as any)?.cache_control === undefined) end--;
  if (end < 0) return { read: 0, written: 0, tokens: 0 };
  const prefix = [body.tools ?? null, system.slice(0, end + 1)];
  const tokens = tokensFor(stringLength(prefix));
  const key = JSON.stringify([body.model, prefix]);
  if (seen.has(key)) return { read: tokens, written: 0, tokens };
  seen.add(key);
  return { read: 0, written: tokens, tokens };
}
