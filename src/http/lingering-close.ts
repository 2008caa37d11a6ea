/**
 * A lingering close (nginx's `lingering_close`) for the answers Engram gives before it
 * has read a request's body: a 401 decided from the headers, a 413 for a body declared or
 * grown over the limit, a 429 over a rate, a 503 while stopping. Such an answer says
 * `connection: close`, and Node then closes the socket as soon as the answer is written
 * (`socket.destroySoon()`, lib/_http_server.js `resOnFinish`), with the client's body
 * still arriving. Closing a socket with unread bytes makes the kernel send a reset
 * instead of a FIN: the client's next write fails with EPIPE, and its TCP stack may
 * throw the answer away unread. An SDK then retries a "connection error" instead of
 * reporting the bad key (undici's fetch, and the `openai` SDK over it, on a busy machine).
 *
 * Instead, after such an answer the socket is half-closed (the answer, then a FIN, so a
 * client that reads it stops sending) and what still arrives is read and thrown away, so
 * the answer is not lost, until the first of:
 * - the request's body has arrived whole, or the client closes its side;
 * - `timeMs` since the answer (nginx's `lingering_time`, 30 s): a client that drips its
 *   body forever is cut off all the same;
 * - `idleMs` without a byte (nginx's `lingering_timeout`, 5 s);
 * - `maxBytes` discarded: never more than Engram would read for a request it accepts.
 * Then the socket is destroyed. Nothing is kept: the request is dumped (Node's parser
 * drops its body), and the bytes are only counted. A stop cuts what still lingers
 * (Fastify's close destroys every connection); the gate does not wait for it.
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config.js';

export interface LingerBounds {
  /** Longest the discarding goes on after the answer; 0 closes at once (no lingering). */
  timeMs: number;
  /** Longest wait for the client's next bytes. */
  idleMs: number;
  /** Most bytes read and discarded. */
  maxBytes: number;
}

/** nginx's `lingering_timeout`: a client that sends nothing for this long has stopped. */
export const LINGER_IDLE_MS = 5_000;
/**
 * How often a lingering socket's bounds are checked: each may be overshot by this much,
 * the bytes by what arrives meanwhile (on loopback, 100 ms is 150 MB; 10 ms, 15 MB).
 */
const LINGER_CHECK_MS = 10;

/**
 * The bounds for a config: its linger time (`ENGRAM_LINGER_MS`), the idle bound within
 * it, and as many bytes as the largest body Engram accepts (a proxied request or a
 * transcript), so discarding a refused body costs no more than reading an accepted one.
 */
export function lingerBounds(config: Pick<Config, 'http' | 'bodyLimit' | 'transcriptMaxBytes'>): LingerBounds {
  const timeMs = config.http.lingerMs;
  return { timeMs, idleMs: Math.min(LINGER_IDLE_MS, timeMs), maxBytes: Math.max(config.bodyLimit, config.transcriptMaxBytes) };
}

/**
 * Makes `server` linger before closing a connection whose request's body is still
 * arriving. Call it after every `request` listener is in place (after `gateServer`):
 * its own listener goes first, so it sees the requests the gate refuses too.
 */
export function lingerBeforeClosing(server: Server, bounds: LingerBounds): void {
  if (bounds.timeMs <= 0) return;
  server.prependListener('request', (request: IncomingMessage) => {
    if (!bodyDeclared(request)) return;
    const socket = request.socket;
    // Node closes a `connection: close` answer's socket with `destroySoon()`; this one
    // socket's copy lingers first while this request's body is unread. A later request on
    // the connection puts its own in place; one without a body leaves this one, which
    // then finds its request complete and closes as Node would.
    socket.destroySoon = () => {
      if (request.complete || socket.destroyed) {
        Reflect.deleteProperty(socket, 'destroySoon');
        socket.destroySoon();
        return;
      }
      linger(socket, request, bounds);
    };
  });
}

export function bodyDeclared(request: IncomingMessage): boolean {
  const { headers } = request;
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}

function linger(socket: Socket, request: IncomingMessage, bounds: LingerBounds): void {
  Reflect.deleteProperty(socket, 'destroySoon');
  // The FIN goes after the answer's last byte: the client learns it may stop sending.
  socket.end();
  // A body nobody reads any more would fill its buffer and stop Node reading the socket.
  request.resume();
  // Node's parser keeps reading the socket and drops the body of a request answered
  // already. Its bytes are counted from `bytesRead`, at intervals: a 'data' listener
  // would take the socket from the parser, which then stops reading it.
  const start = Date.now();
  const first = socket.bytesRead;
  let seen = first;
  let seenAt = start;
  let over = false;
  const stop = () => {
    if (over) return;
    over = true;
    clearInterval(check);
    request.off('end', stop);
    socket.off('end', stop);
    socket.off('close', stop);
    socket.destroy();
  };
  const check = setInterval(() => {
    const now = Date.now();
    const read = socket.bytesRead;
    if (read !== seen) [seen, seenAt] = [read, now];
    if (read - first > bounds.maxBytes || now - seenAt >= bounds.idleMs || now - start >= bounds.timeMs) stop();
  }, Math.min(LINGER_CHECK_MS, bounds.idleMs));
  check.unref();
  request.once('end', stop);
  socket.once('end', stop);
  socket.once('close', stop);
}
