/**
 * What the agent-scoped endpoints decide from the headers alone, before any byte of a
 * body is read (issue 15): who is calling, and whether this client address may have one
 * more body read for it. A caller without a token costs a token lookup, not a buffered
 * body; a client that opens many uploads at once gets 429 instead of Engram's memory.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Control } from '../control/control.js';
import { authenticateAgent, authenticateToken } from '../control/auth.js';
import { EngramError } from '../errors.js';
import { bodyDeclared } from './lingering-close.js';
import type { TokenLookup } from '../ports/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * The agent token of a request to an agent-scoped endpoint, set by its plugin's
     * `onRequest` hook (`authenticateFromHeaders`); null where no such hook ran.
     */
    agentToken: TokenLookup | null;
  }
}

/** The request still has body bytes on their way that nobody has read. */
export function bodyPending(request: FastifyRequest): boolean {
  return bodyDeclared(request.raw) && !request.raw.complete;
}

/**
 * For an answer given before the body was read (401, 429, 413): the connection closes
 * after it. Otherwise Node would read the rest of the body, however large, to keep the
 * connection alive for a next request. Before it closes, what is still arriving is read
 * and discarded within bounds (`lingering-close.ts`), so the client gets to read the answer.
 */
export function closeIfBodyPending(request: FastifyRequest, reply: FastifyReply): void {
  if (bodyPending(request)) reply.header('connection', 'close');
}

/**
 * Checks the token of `/v0/orgs/:org/agents/:agent/...` (it must be that agent's), or of
 * the one base URL `/v1/...` (whose path names no agent: the token's is served), from the
 * headers, and keeps the lookup on the request (`request.agentToken`): handlers take the
 * org and agent from it, so both forms of a route run the same code. Throws the 401
 * otherwise: the plugin's error handler renders it, with the connection closed when a
 * body was on its way.
 */
export async function authenticateFromHeaders(control: Control, request: FastifyRequest, adminTokenHash?: string): Promise<TokenLookup> {
  const { org, agent } = (request.params ?? {}) as { org?: string; agent?: string };
  request.agentToken =
    org === undefined && agent === undefined
      ? await authenticateToken(control, request.headers, adminTokenHash)
      : await authenticateAgent(control, request.headers, org ?? '', agent ?? '', adminTokenHash);
  return request.agentToken;
}

/** The lookup made by `authenticateFromHeaders`; a request without one is refused. */
export function agentTokenOf(request: FastifyRequest): TokenLookup {
  if (!request.agentToken) throw new EngramError('unauthorized');
  return request.agentToken;
}

/**
 * Counts the bodies being read per client address, across the plugins given the same
 * hook. An `onRequest` hook, added after the token check: a request with a body takes a
 * slot before its body is read and gives it back once the body is read whole, or its
 * connection closes, whichever comes first; beyond `limit` slots the request gets 429
 * with `Retry-After`, in the route's error shape.
 */
export function createBodyReads(limit: number): onRequestHookHandler {
  const reading = new Map<string, number>();
  const release = (address: string) => {
    const left = (reading.get(address) ?? 1) - 1;
    if (left > 0) reading.set(address, left);
    else reading.delete(address);
  };
  return async (request, reply) => {
    if (!bodyPending(request)) return;
    const address = request.ip;
    const taken = reading.get(address) ?? 0;
    if (taken >= limit) {
      reply.header('retry-after', '1');
      throw new EngramError('rate_limited', `This address already has ${limit} request bodies being read (ENGRAM_BODIES_PER_ADDRESS); retry when one is done`);
    }
    reading.set(address, taken + 1);
    const { raw } = request;
    const socket = raw.socket;
    let released = false;
    const done = () => {
      if (released) return;
      released = true;
      raw.off('end', done);
      raw.off('error', done);
      socket.off('close', done);
      release(address);
    };
    raw.once('end', done);
    raw.once('error', done);
    socket.once('close', done);
  };
}

/**
 * A client that asks before sending its body (`Expect: 100-continue`, as curl does for
 * large uploads) is told to go on only once the request has passed every `onRequest`
 * check (the token, the count of bodies): one refused never sends its body at all. Node
 * would otherwise answer 100 as soon as the headers arrive.
 */
export function continueWhenReadingBody(app: FastifyInstance): void {
  app.server.on('checkContinue', (request, response) => app.server.emit('request', request, response));
  app.addHook('preParsing', async (request, reply, payload) => {
    if (/100-continue/i.test(String(request.headers.expect ?? '')) && !reply.raw.headersSent) reply.raw.writeContinue();
    return payload;
  });
}
