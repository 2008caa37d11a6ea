/**
 * The upstream HTTP client: undici with keep-alive pools per origin. The only module
 * that imports the HTTP client library.
 */
import { Agent, errors, request } from 'undici';
import { EngramError } from '../../errors.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../../ports/index.js';

export interface UndiciUpstreamOptions {
  /**
   * Longest wait for the response headers. Long: a non-streamed answer's headers come
   * only once the whole answer is generated.
   */
  timeoutMs: number;
  /**
   * Longest silence between two chunks of the response body (default: `timeoutMs`, at
   * most a minute). A stream that stalls ends with an error the relay turns into the
   * protocol's error event, however long the generation has been running.
   */
  idleTimeoutMs?: number;
  /** Sockets per upstream origin; unlimited by default. */
  connections?: number;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

/** Translates transport failures into the error catalogue; aborts stay aborts. */
function upstreamFailure(error: unknown): unknown {
  if (error instanceof EngramError) return error;
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'AbortError' || e?.code === 'UND_ERR_ABORTED' || e?.code === 'ABORT_ERR') return error;
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError) {
    return new EngramError('upstream_timeout', undefined, { cause: error });
  }
  const code = e?.code ?? e?.cause?.code;
  if (code && UNREACHABLE_CODES.has(code)) {
    return new EngramError('upstream_unreachable', `The upstream provider could not be reached (${code})`, { cause: error });
  }
  if (error instanceof errors.InvalidArgumentError) {
    return new EngramError('upstream_unreachable', `The upstream URL is not usable: ${(error as Error).message}`, { cause: error });
  }
  return new EngramError('upstream_unreachable', undefined, { cause: error });
}

export class UndiciUpstream implements UpstreamClient {
  private readonly dispatcher: Agent;

  constructor(options: UndiciUpstreamOptions) {
    this.dispatcher = new Agent({
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.idleTimeoutMs ?? Math.min(options.timeoutMs, 60_000),
      // One HTTP/1.1 stream per socket: as many sockets as clients hold streams open.
      connections: options.connections ?? null,
      keepAliveTimeout: 30_000,
      connect: { timeout: Math.min(options.timeoutMs, 15_000) },
    });
  }

  async send(upstreamRequest: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      const response = await request(upstreamRequest.url, {
        method: upstreamRequest.method,
        headers: upstreamRequest.headers,
        body: upstreamRequest.body,
        signal: upstreamRequest.signal,
        dispatcher: this.dispatcher,
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw upstreamFailure(error);
    }
  }

  failure(error: unknown): unknown {
    return upstreamFailure(error);
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
