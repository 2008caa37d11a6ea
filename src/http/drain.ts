/**
 * Graceful stop at the transport: what `close()` does before Fastify's own close, which
 * (`forceCloseConnections`) cuts every connection at once.
 *
 * The gate stands in front of the HTTP server's `request` and `upgrade` listeners. It
 * counts what is in flight: requests until their response closes, upgraded connections
 * (WebSockets) until their socket closes. `drain()` stops taking work: the listening
 * socket closes (a new connection is refused, so a load balancer or a client retries
 * elsewhere), idle keep-alive connections close, and a request that still arrives on an
 * open connection gets a 503 in its protocol's envelope with `connection: close`. It
 * resolves once nothing is in flight, or at the deadline; the caller then closes the app,
 * which cuts what remains.
 *
 * A WebSocket is in flight while it is open. The gate cannot tell a response being
 * streamed on it from an idle connection: the app's `stopping` signal, aborted as the
 * stop begins (`beginStop`), tells the socket's own code, which closes it with 1001
 * (going away) at once when idle, or once its response in flight is complete.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Duplex } from 'node:stream';
import { EngramError, openAiErrorBody } from '../errors.js';
import { PROTOCOLS } from '../protocols/index.js';
import { engramHeaders } from '../conversation/headers.js';
import { newRequestId } from '../domain/request-log.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;
type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface Gate {
  /** Requests being answered plus WebSockets open. */
  readonly inFlight: number;
  /** True once `drain()` was called. */
  readonly draining: boolean;
  /** Stops taking work; true when everything in flight finished within `graceMs`, false at the deadline. */
  drain(graceMs: number): Promise<boolean>;
}

/** Seconds a refused client is told to wait: by then another replica (or this one, restarted) answers. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Puts the gate in front of `server`'s current `request` and `upgrade` listeners. Call it
 * once every listener is attached (after `app.ready()`), before listening.
 */
export function gateServer(server: Server): Gate {
  const onRequest = server.listeners('request') as RequestListener[];
  const onUpgrade = server.listeners('upgrade') as UpgradeListener[];
  server.removeAllListeners('request');
  server.removeAllListeners('upgrade');
  let inFlight = 0;
  let draining = false;
  let idle: (() => void) | undefined;
  const done = () => {
    inFlight -= 1;
    if (inFlight === 0) idle?.();
  };

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (draining) return refuse(request, response);
    inFlight += 1;
    response.once('close', done);
    for (const listener of onRequest) listener.call(server, request, response);
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (draining) return refuseUpgrade(request, socket);
    inFlight += 1;
    socket.once('close', done);
    for (const listener of onUpgrade) listener.call(server, request, socket, head);
  });

  return {
    get inFlight() {
      return inFlight;
    },
    get draining() {
      return draining;
    },
    drain(graceMs) {
      if (!draining) {
        draining = true;
        // No callback: it would wait for every connection. Fastify's close calls it again.
        if (server.listening) server.close();
        server.closeIdleConnections();
      }
      if (inFlight === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), graceMs);
        idle = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
    },
  };
}

/**
 * The 503 for a request arriving while Engram stops, in the envelope of the protocol
 * whose path it names (`.../v1/messages` gets Anthropic's), else OpenAI's, which the
 * management API and the other surfaces share.
 */
export function shuttingDownBody(url: string): { status: number; body: unknown } {
  const pathname = url.split('?')[0];
  const error = new EngramError('unavailable', 'Engram is shutting down: retry the request');
  const adapter = Object.values(PROTOCOLS).find(
    (protocol) => pathname.endsWith(protocol.upstreamPath) || pathname.includes(`${protocol.upstreamPath}/`),
  );
  return adapter ? adapter.renderError(error) : { status: error.status, body: openAiErrorBody(error) };
}

function refuse(request: IncomingMessage, response: ServerResponse): void {
  const { status, body } = shuttingDownBody(request.url ?? '/');
  const text = JSON.stringify(body);
  response.shouldKeepAlive = false;
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    'retry-after': String(RETRY_AFTER_SECONDS),
    ...engramHeaders(0, newRequestId()),
    connection: 'close',
  });
  response.end(text);
  // An unread body is not waited for: the connection closes after the answer.
  request.resume();
}

function refuseUpgrade(request: IncomingMessage, socket: Duplex): void {
  const { status, body } = shuttingDownBody(request.url ?? '/');
  const text = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
      `retry-after: ${RETRY_AFTER_SECONDS}\r\nconnection: close\r\n\r\n${text}`,
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Aborted when a stop begins: long-lived connections (WebSockets) wind down. */
    stopping: AbortSignal;
    /** Aborts `stopping`; `close()` calls it before draining. */
    beginStop(): void;
  }
}

/** Gives the app its `stopping` signal and `beginStop()`. */
export function decorateStopping(app: FastifyInstance): void {
  const controller = new AbortController();
  // One listener per open WebSocket: thousands are expected, none is a leak.
  setMaxListeners(0, controller.signal);
  app.decorate('stopping', controller.signal);
  app.decorate('beginStop', () => controller.abort());
}
