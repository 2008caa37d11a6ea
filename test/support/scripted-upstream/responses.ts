import { createHash } from 'node:crypto';
import { CREATED, fragments, hashId, openaiErrorType, outputTokens, textDeltas, tokensFor } from './shared.js';
import type { Answer, AnswerContext, ProtocolResponder, SseEvent } from './types.js';

type Status = 'in_progress' | 'completed';

interface ReasoningItem {
  id: string;
  type: 'reasoning';
  summary: Array<{ type: 'summary_text'; text: string }>;
  encrypted_content?: string;
}

interface OutputText {
  type: 'output_text';
  annotations: [];
  logprobs: [];
  text: string;
}

interface MessageItem {
  id: string;
  type: 'message';
  status: Status;
  content: OutputText[];
  role: 'assistant';
}

interface FunctionCallItem {
  id: string;
  type: 'function_call';
  status: Status;
  arguments: string;
  call_id: string;
  name: string;
  namespace?: string;
}

type Item = ReasoningItem | MessageItem | FunctionCallItem;

function thinkingOf(answer: Answer): string {
  return answer.type === 'text' ? answer.thinking ?? '' : '';
}

/**
 * The response id, from the answer and the response it continues, so a chain of
 * identical answers still gets distinct ids in stateful mode.
 */
function responseHash(answer: Answer, ctx: AnswerContext): string {
  const previous = typeof ctx.request?.previous_response_id === 'string' ? ctx.request.previous_response_id : '';
  return hashId('responses', ctx.model, previous, JSON.stringify(answer));
}

/**
 * A deterministic stand-in for the opaque, encrypted reasoning the API hands back
 * (a Fernet token, hence the `gAAAAA` prefix) so clients can replay it statelessly.
 */
function encryptedReasoning(thinking: string): string {
  const digest = createHash('sha256').update(`scripted-reasoning\u0000${thinking}`).digest('base64url');
  return `gAAAAA${digest}${digest}`;
}

function includesEncrypted(ctx: AnswerContext): boolean {
  const include: unknown = ctx.request?.include;
  return Array.isArray(include) && include.includes('reasoning.encrypted_content');
}

/** The output items of an answer, complete, in output order. */
function items(answer: Answer, ctx: AnswerContext): Item[] {
  const hash = responseHash(answer, ctx);
  const out: Item[] = [];
  const thinking = thinkingOf(answer);
  if (thinking) {
    const reasoning: ReasoningItem = { id: `rs_${hashId('rs', hash)}`, type: 'reasoning', summary: [{ type: 'summary_text', text: thinking }] };
    if (includesEncrypted(ctx)) reasoning.encrypted_content = encryptedReasoning(thinking);
    out.push(reasoning);
  }
  if (answer.type === 'text' || answer.text) {
    out.push({
      id: `msg_${hashId('msg', hash)}`,
      type: 'message',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: answer.text ?? '' }],
      role: 'assistant',
    });
  }
  if (answer.type === 'tool_call') {
    out.push({
      id: `fc_${hashId('fc', hash)}`,
      type: 'function_call',
      status: 'completed',
      arguments: JSON.stringify(answer.arguments),
      call_id: answer.id ?? `call_${hashId('call', answer.name, JSON.stringify(answer.arguments))}`,
      name: answer.name,
      ...(answer.namespace === undefined ? {} : { namespace: answer.namespace }),
    });
  }
  return out;
}

function usage(answer: Answer, ctx: AnswerContext) {
  const thinking = thinkingOf(answer);
  const output = outputTokens(answer, thinking);
  return {
    input_tokens: ctx.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: thinking ? tokensFor(thinking.length) : 0 },
    total_tokens: ctx.inputTokens + output,
  };
}

/** The response object; the API echoes the request's parameters, defaults filled in. */
function response(answer: Answer, ctx: AnswerContext, status: Status, output: Item[]) {
  const req = ctx.request ?? {};
  const done = status === 'completed';
  return {
    id: `resp_${responseHash(answer, ctx)}`,
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    completed_at: done ? CREATED : null,
    error: null,
    incomplete_details: null,
    instructions: req.instructions ?? null,
    max_output_tokens: req.max_output_tokens ?? null,
    max_tool_calls: req.max_tool_calls ?? null,
    model: ctx.model,
    output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: req.previous_response_id ?? null,
    prompt_cache_key: req.prompt_cache_key ?? null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    safety_identifier: req.safety_identifier ?? null,
    service_tier: 'default',
    store: req.store ?? true,
    temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: req.tool_choice ?? 'auto',
    tools: Array.isArray(req.tools) ? req.tools : [],
    top_logprobs: 0,
    top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled',
    usage: done ? usage(answer, ctx) : null,
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}

/** What `response.output_item.added` announces: the item with its content still to come. */
function opened(item: Item): Item {
  switch (item.type) {
    case 'reasoning':
      return { id: item.id, type: 'reasoning', summary: [] };
    case 'message':
      return { ...item, status: 'in_progress', content: [] };
    case 'function_call':
      return { ...item, status: 'in_progress', arguments: '' };
  }
}

type Emit = (type: string, payload: Record<string, unknown>) => void;

/** The events between an item's `output_item.added` and `output_item.done`. */
function itemEvents(item: Item, output_index: number, emit: Emit): void {
  const item_id = item.id;
  switch (item.type) {
    case 'reasoning': {
      const text = item.summary[0].text;
      const at = { item_id, output_index, summary_index: 0 };
      emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } });
      for (const delta of textDeltas(text)) emit('response.reasoning_summary_text.delta', { ...at, delta });
      emit('response.reasoning_summary_text.done', { ...at, text });
      emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text } });
      return;
    }
    case 'message': {
      const part = item.content[0];
      const at = { item_id, output_index, content_index: 0 };
      emit('response.content_part.added', { ...at, part: { ...part, text: '' } });
      for (const delta of textDeltas(part.text)) emit('response.output_text.delta', { ...at, delta, logprobs: [] });
      emit('response.output_text.done', { ...at, text: part.text, logprobs: [] });
      emit('response.content_part.done', { ...at, part });
      return;
    }
    case 'function_call': {
      const at = { item_id, output_index };
      for (const delta of fragments(item.arguments, 3)) emit('response.function_call_arguments.delta', { ...at, delta });
      emit('response.function_call_arguments.done', { ...at, arguments: item.arguments });
      return;
    }
  }
}

/** The real event sequence: lifecycle, then each item opened, filled and closed, then completed. */
function events(answer: Answer, ctx: AnswerContext): SseEvent[] {
  const out: SseEvent[] = [];
  const emit: Emit = (type, payload) => {
    out.push({ event: type, data: JSON.stringify({ type, sequence_number: out.length, ...payload }) });
  };
  const all = items(answer, ctx);
  const pending = response(answer, ctx, 'in_progress', []);
  emit('response.created', { response: pending });
  emit('response.in_progress', { response: pending });
  all.forEach((item, output_index) => {
    emit('response.output_item.added', { output_index, item: opened(item) });
    itemEvents(item, output_index, emit);
    emit('response.output_item.done', { output_index, item });
  });
  emit('response.completed', { response: response(answer, ctx, 'completed', all) });
  return out;
}

function errorEnvelope(status: number, message: string) {
  const { type, code } = openaiErrorType(status);
  return { error: { message, type, param: null, code } };
}

function inputText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is { text: string } =>
      part !== null && typeof part === 'object' && ['input_text', 'output_text', 'text'].includes(part.type) && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/** A message item: `type: 'message'`, or the easy form with only `role` and `content`. */
function isMessage(item: any): boolean {
  return item !== null && typeof item === 'object' && (item.type === 'message' || (item.type === undefined && typeof item.role === 'string'));
}

/** OpenAI Responses, as api.openai.com plays it. */
export const responses: ProtocolResponder = {
  protocol: 'responses',
  toolNames(req) {
    const tools: unknown[] = Array.isArray(req?.tools) ? req.tools : [];
    // Codex CLI groups MCP tools in namespaces; calls name the bare function plus its namespace.
    return tools.flatMap((tool: any) => {
      if (tool?.type === 'function' && typeof tool.name === 'string') return [tool.name];
      if (tool?.type === 'namespace' && Array.isArray(tool.tools)) {
        return tool.tools.flatMap((inner: any) => (typeof inner?.name === 'string' ? [inner.name] : []));
      }
      return [];
    });
  },
  userTexts(req) {
    if (typeof req?.input === 'string') return [req.input];
    const input: any[] = Array.isArray(req?.input) ? req.input : [];
    return input.filter((item) => isMessage(item) && item.role === 'user').map((item) => inputText(item.content));
  },
  body: (answer, ctx) => response(answer, ctx, 'completed', items(answer, ctx)),
  events,
  errorBody: (status, message) => errorEnvelope(status, message),
  streamError(status, message, sent) {
    const { type, code } = openaiErrorType(status);
    return { event: 'error', data: JSON.stringify({ type: 'error', code: code ?? type, message, param: null, sequence_number: sent }) };
  },
  headers: (requestId) => ({ 'x-request-id': requestId, 'openai-processing-ms': '1' }),
  previousId: (req) => (typeof req?.previous_response_id === 'string' ? req.previous_response_id : undefined),
  previousNotFound: (id) => ({
    error: {
      message: `Previous response with id '${id}' not found.`,
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'previous_response_not_found',
    },
  }),
  storedId: (answer, ctx) => (ctx.request?.store === false ? undefined : `resp_${responseHash(answer, ctx)}`),
};
