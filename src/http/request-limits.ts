/**
 * How much one tenant may ask of this process, decided from the headers once the token is
 * known, before any body is read: a rate per agent and per token, requests in flight per
 * agent (off unless configured), and the process-wide caps that are always on (requests
 * in flight, open WebSockets). A refusal is a 429 `rate_limited` with `Retry-After`,
 * rendered by each route's own error handler in its protocol's shape. Counted per
 * replica (DESIGN section 9): behind N replicas a client may get up to N times a rate.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { EngramError } from '../errors.js';
import type { TokenLookup } from '../ports/index.js';
import { ConcurrencyLimiter, RateLimiter } from '../security/rate-limits.js';

export type LimitSettings = Config['limits'];

/** A refusal with the seconds after which a retry may succeed. */
export class RateLimitedError extends EngramError {
  readonly retryAfterSeconds: number;

  constructor(message: string, retryAfterMs: number) {
    const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
    super('rate_limited', `${message}; retry in ${seconds} s`);
    this.retryAfterSeconds = seconds;
  }
}

export interface RequestLimits {
  /**
   * Admits one request (or one WebSocket connection, `socket`) of the token's agent:
   * returns the release to call when it ends, or throws `RateLimitedError`.
   */
  admit(lookup: TokenLookup, kind?: 'request' | 'socket'): () => void;
  /** Counts one more request on an open connection against the rates (a `response.create` frame). */
  count(lookup: TokenLookup): void;
  /** An `onRequest` hook for a plugin whose earlier hook set `request.agentToken`. */
  onRequest(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/**
 * An `onError` hook for the app's root: a refusal carries its `Retry-After`, whichever
 * surface renders it (each error handler then gives the body in its protocol's shape).
 */
export async function retryAfterHeader(_request: FastifyRequest, reply: FastifyReply, error: Error): Promise<void> {
  if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
}

const GLOBAL = '';

export function createRequestLimits(settings: LimitSettings, now: () => number = Date.now): RequestLimits {
  const agentRate = settings.agentPerMinute > 0 ? new RateLimiter({ perMinute: settings.agentPerMinute }, now) : undefined;
  const tokenRate = settings.tokenPerMinute > 0 ? new RateLimiter({ perMinute: settings.tokenPerMinute }, now) : undefined;
  const perAgent = settings.agentConcurrency > 0 ? new ConcurrencyLimiter(settings.agentConcurrency) : undefined;
  const inFlight = new ConcurrencyLimiter(settings.maxInFlight);
  const sockets = new ConcurrencyLimiter(settings.maxWebSockets);

  const count = (lookup: TokenLookup): void => {
    // Both rates are checked before either counts, so a refused request costs neither.
    const agentWait = agentRate?.wait(lookup.agent.id) ?? 0;
    if (agentWait > 0) {
      throw new RateLimitedError(`This agent is over its limit of ${settings.agentPerMinute} requests a minute (ENGRAM_RATE_LIMIT_AGENT)`, agentWait);
    }
    const tokenWait = tokenRate?.wait(lookup.token.id) ?? 0;
    if (tokenWait > 0) {
      throw new RateLimitedError(`This token is over its limit of ${settings.tokenPerMinute} requests a minute (ENGRAM_RATE_LIMIT_TOKEN)`, tokenWait);
    }
    agentRate?.take(lookup.agent.id);
    tokenRate?.take(lookup.token.id);
  };

  const admit = (lookup: TokenLookup, kind: 'request' | 'socket' = 'request'): (() => void) => {
    const global = kind === 'socket' ? sockets : inFlight;
    const releaseGlobal = global.enter(GLOBAL);
    if (!releaseGlobal) {
      const [what, limit, setting] =
        kind === 'socket' ? ['WebSockets open', settings.maxWebSockets, 'ENGRAM_MAX_WEBSOCKETS'] : ['requests in flight', settings.maxInFlight, 'ENGRAM_MAX_IN_FLIGHT'];
      throw new RateLimitedError(`Engram has its maximum of ${limit} ${what} (${setting})`, 1_000);
    }
    const releaseAgent = perAgent ? perAgent.enter(lookup.agent.id) : () => undefined;
    if (!releaseAgent) {
      releaseGlobal();
      throw new RateLimitedError(
        `This agent already has ${settings.agentConcurrency} requests and WebSockets open (ENGRAM_CONCURRENCY_PER_AGENT)`,
        1_000,
      );
    }
    try {
      // Opening a WebSocket counts as a request; then each of its frames does (`count`).
      count(lookup);
    } catch (error) {
      releaseAgent();
      releaseGlobal();
      throw error;
    }
    return () => {
      releaseAgent();
      releaseGlobal();
    };
  };

  return {
    admit,
    count,
    async onRequest(request, reply) {
      const lookup = request.agentToken;
      if (!lookup) throw new EngramError('unauthorized');
      const release = admit(lookup);
      // `close` comes once the answer is sent or the connection is gone, whichever is first.
      reply.raw.once('close', release);
    },
  };
}
