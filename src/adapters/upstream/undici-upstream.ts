/**
 * The upstream HTTP client: undici with keep-alive pools per origin. The only module
 * that imports the HTTP client library.
 */
import { lookup } from 'node:dns';
import { Agent, errors, request } from 'undici';
import { EngramError, fromUpstream } from '../../errors.js';
import { AddressRefusedError, guardedLookup, hostRefusal, type AddressPolicy } from '../../security/address-policy.js';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../../ports/index.js';
import type { UpstreamOwner } from '../../domain/types.js';

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
  /**
   * Addresses the upstream may be at: the URL's host is checked before each request and
   * every address a name resolves to when connecting (DNS rebinding). Absent: anywhere.
   */
  addressPolicy?: AddressPolicy;
  /**
   * The policy for upstreams dashboard users set (`UpstreamRequest.setBy`), checked the
   * same two ways; absent: `addressPolicy`.
   */
  userAddressPolicy?: AddressPolicy;
  /** How names are resolved (`dns.lookup`); tests give their own to play a rebinding name. */
  resolve?: typeof lookup;
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

/**
 * Translates transport failures into the error catalogue, marked with the upstream's host
 * for the log (`EngramError.upstream`); aborts stay aborts.
 */
function upstreamFailure(error: unknown, url?: string): unknown {
  const failure = catalogued(error);
  return url === undefined ? failure : fromUpstream(failure, { url });
}

function catalogued(error: unknown): unknown {
  if (error instanceof EngramError) return error;
  const e = error as { name?: string; code?: string; cause?: { code?: string } };
  if (e?.name === 'AbortError' || e?.code === 'UND_ERR_ABORTED' || e?.code === 'ABORT_ERR') return error;
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError) {
    return new EngramError('upstream_timeout', undefined, { cause: error });
  }
  const code = e?.code ?? e?.cause?.code;
  if (code === 'ENGRAM_ADDRESS_REFUSED') {
    return new EngramError('upstream_unreachable', (e as { message?: string }).message ?? (e.cause as Error).message, { cause: error });
  }
  if (code && UNREACHABLE_CODES.has(code)) {
    return new EngramError('upstream_unreachable', `The upstream provider could not be reached (${code})`, { cause: error });
  }
  if (error instanceof errors.InvalidArgumentError) {
    return new EngramError('upstream_unreachable', `The upstream URL is not usable: ${(error as Error).message}`, { cause: error });
  }
  return new EngramError('upstream_unreachable', undefined, { cause: error });
}

/** One pool of connections and its address policy: the operator's, or the dashboard users'. */
interface Route {
  dispatcher: Agent;
  policy: AddressPolicy | undefined;
}

export class UndiciUpstream implements UpstreamClient {
  readonly #routes: Record<UpstreamOwner, Route>;

  constructor(options: UndiciUpstreamOptions) {
    const route = (policy: AddressPolicy | undefined): Route => ({
      policy,
      dispatcher: new Agent({
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.idleTimeoutMs ?? Math.min(options.timeoutMs, 60_000),
        // One HTTP/1.1 stream per socket: as many sockets as clients hold streams open.
        connections: options.connections ?? null,
        keepAliveTimeout: 30_000,
        connect: {
          timeout: Math.min(options.timeoutMs, 15_000),
          ...(policy ? { lookup: guardedLookup((options.resolve ?? lookup) as never, policy) } : {}),
        },
      }),
    });
    const operator = route(options.addressPolicy);
    // Pools are per origin: a user's request must never ride a connection the operator's
    // policy let through (to loopback, say), so users get a pool of their own.
    this.#routes = { operator, user: options.userAddressPolicy ? route(options.userAddressPolicy) : operator };
  }

  async send(upstreamRequest: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      const { dispatcher, policy } = this.#routes[upstreamRequest.setBy ?? 'operator'];
      // An address literal never goes through the lookup: checked here.
      const refused = policy && this.#refusal(new URL(upstreamRequest.url), policy);
      if (refused) {
        const why = `The upstream host is refused: ${refused}`;
        throw new EngramError('upstream_unreachable', why, { cause: new AddressRefusedError(why) });
      }
      const response = await request(upstreamRequest.url, {
        method: upstreamRequest.method,
        headers: upstreamRequest.headers,
        body: upstreamRequest.body,
        signal: upstreamRequest.signal,
        dispatcher,
        ...(upstreamRequest.headersTimeoutMs ? { headersTimeout: upstreamRequest.headersTimeoutMs } : {}),
      });
      return { status: response.statusCode, headers: response.headers, body: response.body };
    } catch (error) {
      throw upstreamFailure(error, upstreamRequest.url);
    }
  }

  /** Policy -> host -> why it is refused (or undefined): the answer depends on the host and the policy only. */
  readonly #refusals = new Map<AddressPolicy, Map<string, string | undefined>>();

  #refusal(url: URL, policy: AddressPolicy): string | undefined {
    const host = url.hostname;
    let known = this.#refusals.get(policy);
    if (!known) this.#refusals.set(policy, (known = new Map()));
    if (known.has(host)) return known.get(host);
    const refused = hostRefusal(url, policy);
    if (known.size >= 10_000) known.clear();
    known.set(host, refused);
    return refused;
  }

  failure(error: unknown): unknown {
    // A failure mid-body: the URL is not at hand here; the caller that knows it marks the error (`fromUpstream`).
    return upstreamFailure(error);
  }

  async close(): Promise<void> {
    const { operator, user } = this.#routes;
    await Promise.all([operator.dispatcher.close(), ...(user === operator ? [] : [user.dispatcher.close()])]);
  }
}
