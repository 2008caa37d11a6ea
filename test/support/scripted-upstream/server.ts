import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatCompletions, notFoundBody } from './chat-completions.js';
import { messages, promptCache } from './messages.js';
import { responses } from './responses.js';
import { CREATED, defaultExtraction, defaultTags, hashId, isReply, stringLength, taggingLines, tokensFor } from './shared.js';
import { encodeSseEvent, writeEndless, writeSse } from './sse-writer.js';
import type {
  AnswerContext,
  Extractor,
  ProtocolResponder,
  RecordedRequest,
  Reply,
  ReplyOptions,
  ScriptedUpstream,
  ScriptedUpstreamOptions,
  Tagger,
} from './types.js';

const RESPONDERS: Readonly<Record<string, ProtocolResponder>> = {
  '/v1/chat/completions': chatCompletions,
  '/v1/messages': messages,
  '/v1/responses': responses,
};

const MODELS = ['gpt-4o-mini', 'gpt-4o', 'claude-sonnet-4-6', 'claude-haiku-4-5'];

const EXTRACTION_TOOL = 'record_reflections';
const TAGGING_TOOL = 'record_tags';
const CUT_OFF_TEXT = 'This answer is cut off partway through, so the client never sees its end.';
/** The word an endless answer's repeated delta is found by. */
const ENDLESS_MARK = 'endlessly';

interface Scripted {
  reply: Reply;
  options: ReplyOptions;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(raw: Buffer): any {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return null;
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  });
  res.end(text);
}

function modelList(): unknown {
  const data = MODELS.map((id) => ({
    id,
    object: 'model',
    created: CREATED,
    owned_by: id.startsWith('claude') ? 'anthropic' : 'openai',
    // Anthropic's list shape, so either SDK can read the same answer.
    type: 'model',
    display_name: id,
    created_at: new Date(CREATED * 1000).toISOString(),
  }));
  return { object: 'list', data, has_more: false, first_id: MODELS[0], last_id: MODELS[MODELS.length - 1] };
}

function lastUserText(responder: ProtocolResponder, body: any): string {
  const texts = responder.userTexts(body).filter((t) => t.length > 0);
  return texts[texts.length - 1] ?? '';
}

/** The reply to a request nothing was scripted for: `echo: <last user text>`. */
export function echoReply(req: RecordedRequest): Reply {
  const responder = RESPONDERS[new URL(req.path, 'http://upstream').pathname];
  return { type: 'text', text: `echo: ${responder ? lastUserText(responder, req.json) : ''}` };
}

/** Per-instance script: the reply queue and the rules for unscripted requests. */
function createScript() {
  const defaultReply = echoReply;
  const defaultExtractor: Extractor = (_req, transcript) => defaultExtraction(transcript);
  const defaultTagger: Tagger = (_req, lines) => defaultTags(lines);
  const state = {
    queue: [] as Scripted[],
    defaultReply,
    extractor: defaultExtractor,
    tagger: defaultTagger,
    reset() {
      state.queue.length = 0;
      state.defaultReply = defaultReply;
      state.extractor = defaultExtractor;
      state.tagger = defaultTagger;
    },
  };
  return state;
}

type Script = ReturnType<typeof createScript>;

function nextReply(script: Script, responder: ProtocolResponder, req: RecordedRequest): Scripted {
  if (req.extraction) {
    const transcript = responder.userTexts(req.json).join('\n');
    const result = script.extractor(req, transcript);
    const reply: Reply = isReply(result)
      ? result
      : { type: 'tool_call', name: EXTRACTION_TOOL, arguments: { reflections: result } };
    return { reply, options: {} };
  }
  if (req.tagging) {
    const lines = taggingLines(responder.userTexts(req.json).join('\n'));
    const result = script.tagger(req, lines);
    const reply: Reply = isReply(result) ? result : { type: 'tool_call', name: TAGGING_TOOL, arguments: { reflections: result } };
    return { reply, options: {} };
  }
  return script.queue.shift() ?? { reply: script.defaultReply(req), options: {} };
}

/** The `previous_response_id` of a request when this upstream does not hold that response. */
function unknownPrevious(responder: ProtocolResponder, body: any, stored: Set<string> | null): string | undefined {
  const id = responder.previousId?.(body);
  return id !== undefined && !stored?.has(id) ? id : undefined;
}

/**
 * Plays one reply for a conversation, extraction or tagging request. `stored` collects the ids
 * of stateful answers (responses) when the upstream keeps state, else it is null.
 */
async function play(
  responder: ProtocolResponder,
  { reply, options }: Scripted,
  body: any,
  req: IncomingMessage,
  res: ServerResponse,
  stored: Set<string> | null,
  cached: Set<string>,
): Promise<void> {
  const stream = body.stream === true;
  const cache = responder.protocol === 'messages' ? promptCache(body, cached) : { read: 0, written: 0, tokens: 0 };
  const ctx: AnswerContext = {
    model: typeof body.model === 'string' ? body.model : 'unknown',
    inputTokens: tokensFor(stringLength([body.system, body.messages, body.instructions, body.input, body.tools])) - cache.tokens,
    cacheReadTokens: cache.read,
    cacheWriteTokens: cache.written,
    includeUsage: body.stream_options?.include_usage === true,
    request: body,
  };
  const requestId = `req_${hashId(responder.protocol, ctx.model, JSON.stringify(reply))}`;
  const headers = responder.headers(requestId);
  switch (reply.type) {
    case 'hang':
      return;
    case 'break':
      if (!stream) {
        req.socket.destroy();
        return;
      }
      return writeSse(res, headers, responder.events({ type: 'text', text: reply.text ?? CUT_OFF_TEXT }, ctx, options), {
        chunkDelayMs: options.chunkDelayMs,
        breakAfter: reply.afterEvents,
      });
    case 'stall': {
      const answer = { type: 'text' as const, text: reply.text ?? CUT_OFF_TEXT };
      if (!stream) {
        // Headers and half the body, then silence: the client waits on the body.
        const text = JSON.stringify(responder.body(answer, ctx));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        return;
      }
      return writeSse(res, headers, responder.events(answer, ctx, options), { chunkDelayMs: options.chunkDelayMs, stallAfter: reply.afterEvents });
    }
    case 'endless': {
      const payload = 'x'.repeat(reply.deltaBytes ?? 60 * 1024);
      if (!stream) {
        return writeEndless(res, { 'content-type': 'application/json', ...headers }, '{"id":"endless","text":"', payload);
      }
      // A two-word answer has two text deltas; the first is repeated with the payload as its text.
      const events = responder.events({ type: 'text', text: `${ENDLESS_MARK} ${ENDLESS_MARK}` }, ctx, options);
      const first = events.findIndex((event) => event.data.includes(`${ENDLESS_MARK} `));
      const delta = events[first];
      return writeEndless(
        res,
        { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers },
        events.slice(0, first).map(encodeSseEvent).join(''),
        encodeSseEvent({ ...delta, data: delta.data.replace(`${ENDLESS_MARK} `, payload) }),
      );
    }
    case 'error': {
      const message = `Scripted upstream error (status ${reply.status}).`;
      if (stream && reply.afterEvents !== undefined) {
        const events = responder.events({ type: 'text', text: reply.text ?? CUT_OFF_TEXT }, ctx, options).slice(0, reply.afterEvents);
        const streamError = responder.streamError(reply.status, message, events.length);
        const error = reply.body === undefined ? streamError : { ...streamError, data: JSON.stringify(reply.body) };
        return writeSse(res, { ...headers, ...reply.headers }, [...events, error], options);
      }
      const envelope = reply.body === undefined ? responder.errorBody(reply.status, message, requestId) : reply.body;
      return sendJson(res, reply.status, envelope, { ...headers, ...reply.headers });
    }
    case 'text':
    case 'tool_call': {
      // Remembered before it is sent: the client may continue from it as soon as it arrives.
      const id = stored === null ? undefined : responder.storedId?.(reply, ctx);
      if (id !== undefined) stored?.add(id);
      if (stream) return writeSse(res, headers, responder.events(reply, ctx, options), options);
      return sendJson(res, 200, responder.body(reply, ctx), headers);
    }
  }
}

function presentsKey(req: IncomingMessage, key: string): boolean {
  return req.headers.authorization === `Bearer ${key}` || req.headers['x-api-key'] === key;
}

/**
 * Starts a fake LLM provider on 127.0.0.1, port 0. It speaks OpenAI Chat Completions,
 * OpenAI Responses and Anthropic Messages faithfully enough for the official SDKs,
 * records every request before answering, and answers deterministically: the same
 * reply to the same request gives the same bytes, so direct and proxied responses can
 * be compared.
 */
export async function startScriptedUpstream(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
  const requests: RecordedRequest[] = [];
  const script = createScript();
  // Ids of the Responses answers given, in stateful mode; nothing else is kept.
  const stored = options.statefulResponses === true ? new Set<string>() : null;
  /** The prompt prefixes Anthropic's cache holds (`promptCache`). */
  const promptCached = new Set<string>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const pathname = new URL(path, 'http://upstream').pathname;
    const json = parseJson(raw);
    const responder = method === 'POST' ? RESPONDERS[pathname] : undefined;
    const recorded: RecordedRequest = {
      method,
      path,
      headers: { ...req.headers },
      raw,
      json,
      protocol: responder?.protocol ?? 'other',
      extraction: responder !== undefined && responder.toolNames(json).includes(EXTRACTION_TOOL),
      tagging: responder !== undefined && responder.toolNames(json).includes(TAGGING_TOOL),
      abandoned: false,
    };
    res.once('close', () => {
      if (!res.writableFinished) recorded.abandoned = true;
    });
    requests.push(recorded);
    // No Date header: responses must be byte-identical across runs.
    res.sendDate = false;

    if (options.apiKey !== undefined && !presentsKey(req, options.apiKey)) {
      sendJson(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } });
    } else if (method === 'HEAD' && pathname === '/') {
      res.writeHead(200).end();
    } else if (method === 'GET' && pathname === '/v1/models') {
      sendJson(res, 200, modelList());
    } else if (method === 'POST' && pathname === '/v1/messages/count_tokens') {
      sendJson(res, 200, { input_tokens: Math.round(JSON.stringify(json ?? '').length / 4) });
    } else if (responder && (json === null || typeof json !== 'object')) {
      const requestId = `req_${hashId('invalid', raw.toString('base64'))}`;
      sendJson(res, 400, responder.errorBody(400, 'The request body is not valid JSON.', requestId), responder.headers(requestId));
    } else if (responder) {
      const previous = unknownPrevious(responder, json, stored);
      if (previous === undefined) {
        await play(responder, nextReply(script, responder, recorded), json, req, res, stored, promptCached);
      } else {
        // Rejected before any generation: the reply queue stays as it is.
        const requestId = `req_${hashId('previous', previous)}`;
        sendJson(res, 400, responder.previousNotFound?.(previous), responder.headers(requestId));
      }
    } else {
      sendJson(res, 404, notFoundBody(method, pathname));
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in the script itself: make it loud rather than leave the client waiting.
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: 'scripted_upstream_bug', param: null, code: null } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    conversationRequests: () => requests.filter((r) => r.protocol !== 'other' && !r.extraction && !r.tagging),
    extractionRequests: () => requests.filter((r) => r.extraction),
    taggingRequests: () => requests.filter((r) => r.tagging),
    enqueue(...replies) {
      for (const entry of replies) {
        script.queue.push(Array.isArray(entry) ? { reply: entry[0], options: entry[1] } : { reply: entry, options: {} });
      }
    },
    setDefaultReply(fn) {
      script.defaultReply = fn;
    },
    setExtractor(fn) {
      script.extractor = fn;
    },
    setTagger(fn) {
      script.tagger = fn;
    },
    reset() {
      requests.length = 0;
      stored?.clear();
      script.reset();
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive, hanging and still-streaming connections would hold the process open.
        server.closeAllConnections();
      });
    },
  };
}
