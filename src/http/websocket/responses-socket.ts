/**
 * Endpoint 3 in WebSocket mode: `GET .../v1/responses` with `Upgrade: websocket`,
 * authenticated on the upgrade request like HTTP. Each `response.create` frame runs
 * the same conversation machine as a POST (Engram bridges to the upstream over HTTP
 * streaming, so any Responses upstream works); the events come back as frames. One
 * response at a time per connection; the connection remembers its latest response so
 * chains work with `store: false`; it ends after `websocket.maxConnectionMs`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket, RawData } from 'ws';
import type { ChainCache } from '../../conversation/chains.js';
import type { ConversationFlow } from '../../conversation/actors.js';
import { runExchange } from '../../conversation/run-exchange.js';
import { bridgedHeaders } from '../../conversation/headers.js';
import type { Deps } from '../../deps.js';
import { EngramError, openAiErrorBody, toEngramError } from '../../errors.js';
import { MAX_JSON_DEPTH, isObject, jsonDeeperThan, tooDeep } from '../../protocols/shared.js';
import { responses } from '../../protocols/responses/adapter.js';
import { authenticateFromHeaders } from '../before-body.js';
import type { TokenLookup } from '../../ports/index.js';
import type { RequestLimits } from '../request-limits.js';
import { errorFrame, wsSink } from './ws-sink.js';
import { warmUp } from './warm-up.js';

const HEARTBEAT_MS = 30_000;

function errorOf(error: EngramError): string {
  return errorFrame(error.status, (openAiErrorBody(error) as { error: unknown }).error);
}

/** Parses a client frame into a `response.create` body, or throws the error to report. */
function createBody(data: RawData, isBinary: boolean): { body: Record<string, unknown>; generate: boolean } {
  if (isBinary) throw new EngramError('invalid_request', 'Binary frames are not supported: send each event as a JSON text frame');
  const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
  // Deeper than any real request: refused before parsing (the exchange takes the parsed body).
  if (jsonDeeperThan(text, MAX_JSON_DEPTH)) throw tooDeep();
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (error) {
    throw new EngramError('invalid_json', `The frame is not valid JSON: ${(error as Error).message}`);
  }
  if (!isObject(event)) throw new EngramError('invalid_request', 'A frame must be a JSON object with a `type`');
  if (event.type !== 'response.create') {
    throw new EngramError('invalid_request', `Unknown event type ${JSON.stringify(event.type ?? null)}: the only client event is 'response.create'`, { param: 'type' });
  }
  const { type: _type, generate, stream: _stream, background, ...body } = event;
  if (background === true) throw new EngramError('invalid_request', '`background` is not supported over WebSocket', { param: 'background' });
  if (generate !== undefined && typeof generate !== 'boolean') throw new EngramError('invalid_request', '`generate` must be a boolean', { param: 'generate' });
  return { body, generate: generate !== false };
}

/**
 * `prefix`: the agent's own base URL (`/v0/orgs/:org/agents/:agent`, the token must be
 * that agent's) or the one base URL (`''`, the token's agent is served).
 */
export function responsesSocketRoute(app: FastifyInstance, deps: Deps, flow: ConversationFlow, prefix: string, limits: RequestLimits): void {
  /** The open connection's place under the limits, released when it closes. */
  const admitted = new WeakMap<FastifyRequest, { lookup: TokenLookup; release: () => void }>();
  app.route({
    method: 'GET',
    url: `${prefix}/v1/responses`,
    config: { protocol: responses },
    // Refused before the upgrade, with an HTTP 401 (or 429), like a POST without a token.
    preValidation: async (request) => {
      const lookup = await authenticateFromHeaders(deps.control, request, deps.adminTokenHash);
      const release = limits.admit(lookup, 'socket');
      admitted.set(request, { lookup, release });
      // Released with the connection, or with the request when the upgrade never happens.
      request.raw.socket.once('close', release);
    },
    handler: async (request) => {
      admitted.get(request)?.release();
      throw new EngramError('method_not_allowed', 'GET /v1/responses opens a WebSocket (send `Upgrade: websocket`); create responses over HTTP with POST');
    },
    wsHandler: (socket: WebSocket, request: FastifyRequest) => {
      const place = admitted.get(request);
      if (!place) return void socket.close(1011, 'not authenticated');
      socket.once('close', place.release);
      openSession(socket, request, place.lookup, deps, flow, () => limits.count(place.lookup));
    },
  });
}

/** `60 minutes`, `90 seconds`. */
function limitText(ms: number): string {
  return ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${Math.round(ms / 1000)} seconds`;
}

/** `count` is called for each `response.create` and throws when the tenant is over its rate. */
function openSession(socket: WebSocket, request: FastifyRequest, lookup: TokenLookup, deps: Deps, flow: ConversationFlow, count: () => void): void {
  const cache: ChainCache = {};
  const bridged = bridgedHeaders(request.headers);
  // The agent of the upgrade's token: on the agent's own URL, checked to be the path's.
  const { orgId: org, id: agent } = lookup.agent;
  let inFlight: Promise<void> | undefined;
  let abortInFlight: (() => void) | undefined;
  let expired = false;

  const send = (text: string) => {
    if (socket.readyState === socket.OPEN) socket.send(text);
  };
  const expire = () => {
    expired = true;
    send(errorOf(new EngramError('websocket_connection_limit_reached', `This connection reached its time limit (${limitText(deps.config.websocket.maxConnectionMs)}): open a new WebSocket and continue (chain from your last response id, or resend the full input)`)));
    socket.close(1000, 'connection limit reached');
  };
  const timer = setTimeout(() => {
    if (inFlight) void inFlight.finally(expire);
    else expire();
  }, deps.config.websocket.maxConnectionMs);
  timer.unref();
  // Engram stopping: the connection goes away once it has no response in flight, so the
  // stop waits for answers, not for idle clients.
  const stopping = request.server.stopping;
  const goAway = () => socket.close(1001, 'Engram is shutting down');
  const onStop = () => (inFlight ? void inFlight.finally(goAway) : goAway());
  stopping.addEventListener('abort', onStop, { once: true });
  socket.once('close', () => stopping.removeEventListener('abort', onStop));
  // A peer that vanished without a close (a laptop put to sleep, a dropped NAT entry)
  // answers no ping: its connection, and any response in flight on it, is ended.
  let alive = true;
  socket.on('pong', () => (alive = true));
  const heartbeat = setInterval(() => {
    if (!alive) return void socket.terminate();
    alive = false;
    socket.ping();
  }, HEARTBEAT_MS);
  heartbeat.unref();

  socket.on('close', () => {
    clearTimeout(timer);
    clearInterval(heartbeat);
    abortInFlight?.();
  });
  socket.on('error', (error) => request.log.debug({ err: error }, 'responses websocket error'));

  socket.on('message', (data: RawData, isBinary: boolean) => {
    let frame: ReturnType<typeof createBody>;
    try {
      if (expired) throw new EngramError('websocket_connection_limit_reached', 'This connection reached its time limit: open a new WebSocket');
      frame = createBody(data, isBinary);
      count();
      if (inFlight) throw new EngramError('response_in_flight', 'A response is already in progress on this connection: wait for its `response.completed` (or an error) before the next `response.create`');
    } catch (error) {
      send(errorOf(toEngramError(error)));
      return;
    }
    inFlight = (frame.generate ? generate(frame.body) : warm(frame.body)).finally(() => {
      inFlight = undefined;
      abortInFlight = undefined;
    });
  });

  const generate = (frameBody: Record<string, unknown>) => {
    const body = { ...frameBody, stream: true };
    return runExchange(
      flow,
      // Each frame's token is looked up again (the authenticate step): a token revoked while
      // the connection stays open stops working at its next response.create.
      {
        request: {
          adapter: responses,
          orgId: org,
          agentId: agent,
          headers: bridged,
          rawBody: Buffer.from(JSON.stringify(body)),
          body,
          search: '',
          sink: wsSink(socket, {
            maxEventBytes: deps.config.sseMaxEventBytes,
            onOversize: (bytes) => request.log.warn({ bytes, limit: deps.config.sseMaxEventBytes }, 'an upstream event too large for a WebSocket frame cut the response off'),
          }),
          chainCache: cache,
        },
      },
      { onClientGone: (callback) => (abortInFlight = callback), log: request.log, observer: request.server.metrics },
    );
  };

  const warm = async (body: Record<string, unknown>) => {
    try {
      for (const event of await warmUp(deps, { orgId: org, agentId: agent, headers: request.headers, body, cache })) send(event);
    } catch (error) {
      const engramError = toEngramError(error);
      if (engramError.code === 'internal') request.log.error({ err: error }, 'websocket warm-up failed');
      send(errorOf(engramError));
    }
  };
}
