/**
 * The client side of the tee over a Responses WebSocket: the upstream's SSE events are
 * sent as one text frame each (the event's JSON, as the API's WebSocket mode does), and
 * an answer that is not a stream (an error status, Engram's own error) becomes one
 * `{"type":"error","status":N,"error":{...}}` frame. The connection stays open after a
 * response, for the next `response.create`.
 *
 * The request id (`x-engram-request-id` over HTTP: a WebSocket has headers only once, on
 * the upgrade) comes with each response's last frame, as a top-level field
 * `engram_request_id`: on the event that ends it (`response.completed`, `.failed`,
 * `.incomplete`), written in front of the upstream's own fields, whose bytes stay as they
 * came, and on an `error` frame. No frame is added: clients check that every event of a
 * response has a rising `sequence_number`, and an extra frame would have none. Clients
 * skip fields they do not know, as the API adds new ones over time.
 */
import type { WebSocket } from 'ws';
import type { ResponseSink } from '../../conversation/exchange.js';
import { REQUEST_ID_HEADER } from '../../conversation/headers.js';
import { isObject, parseJsonOr } from '../../protocols/shared.js';
import { SseParser } from '../../protocols/sse.js';

/** Above this many bytes queued on the socket, the relay pauses the upstream. */
const HIGH_WATER = 1024 * 1024;

/** The events that end a response: after one, the client may send its next `response.create`. */
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

function isTerminal(event: { event: string; data: string }): boolean {
  if (TERMINAL.has(event.event)) return true;
  if (event.event !== 'message') return false;
  const parsed = parseJsonOr(event.data, undefined);
  return isObject(parsed) && typeof parsed.type === 'string' && TERMINAL.has(parsed.type);
}

/** An `error` frame of the WebSocket mode, for a failure that has an HTTP status; with the request's id once it has one. */
export function errorFrame(status: number, error: unknown, requestId?: string): string {
  return JSON.stringify({ type: 'error', status, error, ...(requestId === undefined ? {} : { engram_request_id: requestId }) });
}

/** An event's JSON object with `engram_request_id` as its first field; the rest byte for byte. */
function withRequestId(data: string, requestId: string | undefined): string {
  const open = data.indexOf('{');
  if (requestId === undefined || open === -1 || data.slice(0, open).trim() !== '') return data;
  const rest = data.slice(open + 1).trimStart();
  return `{"engram_request_id":${JSON.stringify(requestId)}${rest.startsWith('}') ? '' : ','}${rest}`;
}

export interface WsSinkOptions {
  /** The largest upstream event relayed as a frame (`ENGRAM_SSE_MAX_EVENT_BYTES`). */
  maxEventBytes?: number;
  /** An event was over `maxEventBytes`: the response was cut off with an error frame. */
  onOversize?: (bytes: number) => void;
}

/**
 * An event over `maxEventBytes` cannot be relayed untouched as HTTP does (a frame is one
 * whole event, and holding it is what the cap prevents): the response ends there with an
 * `upstream_event_too_large` error frame and its remaining events are dropped.
 */
export function wsSink(socket: WebSocket, options: WsSinkOptions = {}): ResponseSink {
  let status = 0;
  let streaming = false;
  let finished = false;
  const body: Buffer[] = [];
  let queued = 0;
  let resume: (() => void) | undefined;
  // The response's last event waits for `end()`, which comes once the exchange is recorded
  // (the connection's chain memory included) and just before the connection accepts the
  // next `response.create`: a client answering it at once is neither refused as in flight
  // nor told its previous response is unknown.
  let held: string | undefined;
  /** This response's `x-engram-request-id`. */
  let requestId: string | undefined;

  const send = (text: string) => {
    if (socket.readyState !== socket.OPEN) return;
    queued++;
    socket.send(text, () => {
      queued--;
      if (queued === 0 && resume) {
        const next = resume;
        resume = undefined;
        next();
      }
    });
  };
  // SSE bytes parsed into events here: the client wants one frame per event.
  let cutOff = false;
  const parser = new SseParser(
    (event) => {
      if (cutOff || !event.data || event.data === '[DONE]') return;
      if (isTerminal(event)) held = event.data;
      else send(event.data);
    },
    {
      maxEventBytes: options.maxEventBytes,
      onOversize: (bytes) => {
        if (cutOff) return;
        cutOff = true;
        options.onOversize?.(bytes);
        const message = `The upstream sent an event of ${bytes} bytes, over the ${options.maxEventBytes} a WebSocket frame may relay (ENGRAM_SSE_MAX_EVENT_BYTES); this response ends here`;
        send(errorFrame(502, { type: 'server_error', code: 'upstream_event_too_large', message }, requestId));
      },
    },
  );
  const flush = () => {
    if (held !== undefined) send(withRequestId(held, requestId));
    held = undefined;
  };

  return {
    get headersSent() {
      return status !== 0;
    },
    writeHead(code, headers) {
      status = code;
      const id = headers[REQUEST_ID_HEADER];
      requestId = typeof id === 'string' ? id : undefined;
      streaming = code >= 200 && code < 300 && String(headers['content-type'] ?? '').includes('text/event-stream');
    },
    write(chunk) {
      if (streaming) parser.push(chunk);
      else body.push(Buffer.from(chunk));
      return socket.bufferedAmount < HIGH_WATER;
    },
    onDrain(next) {
      if (queued === 0) next();
      else resume = next;
    },
    end() {
      if (finished) return;
      finished = true;
      if (streaming) {
        parser.end();
        flush();
        return;
      }
      const parsed = parseJsonOr(Buffer.concat(body).toString('utf8'), undefined);
      if (status >= 200 && status < 300 && isObject(parsed) && parsed.object === 'response') {
        // An upstream that answered in one piece despite `stream: true`.
        send(JSON.stringify({ engram_request_id: requestId, type: 'response.completed', sequence_number: 0, response: parsed }));
        return;
      }
      const error = isObject(parsed) && isObject(parsed.error) ? parsed.error : { type: 'upstream_error', message: `The upstream answered ${status}` };
      send(errorFrame(status >= 400 ? status : 502, error, requestId));
    },
    fail(frame) {
      if (finished) return;
      finished = true;
      // A response that had ended, then its stream failed: the end first, as it came.
      flush();
      if (streaming && frame !== undefined) {
        parser.push(Buffer.from(frame));
        parser.end();
      } else {
        send(errorFrame(502, { type: 'server_error', code: 'upstream_stream_failed', message: 'The upstream stream ended abnormally' }, requestId));
      }
    },
  };
}
