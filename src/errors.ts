/**
 * The one catalogue of Engram's own errors: stable code, HTTP status, and the error
 * type each protocol family uses for it. Each protocol renders an `EngramError` into its
 * own envelope in exactly one function (`ErrorRenderer.renderError`).
 */
export const ERRORS = {
  invalid_json: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Request body is not valid JSON' },
  invalid_request: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Invalid request' },
  missing_model: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'The request has no `model`' },
  unauthorized: { status: 401, type: 'invalid_request_error', anthropic: 'authentication_error', message: 'Missing or invalid Engram access token' },
  forbidden: { status: 403, type: 'invalid_request_error', anthropic: 'permission_error', message: 'This token may not do that' },
  previous_response_not_found: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Previous response not found' },
  response_in_flight: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'A response is already in progress on this connection' },
  websocket_connection_limit_reached: { status: 400, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'The WebSocket connection reached its time limit' },
  not_found: { status: 404, type: 'invalid_request_error', anthropic: 'not_found_error', message: 'Not found' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Method not allowed' },
  conflict: { status: 409, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Conflict' },
  body_too_large: { status: 413, type: 'invalid_request_error', anthropic: 'request_too_large', message: 'Request body is larger than the limit' },
  unsupported_media_type: { status: 415, type: 'invalid_request_error', anthropic: 'invalid_request_error', message: 'Unsupported content type' },
  rate_limited: { status: 429, type: 'rate_limit_error', anthropic: 'rate_limit_error', message: 'Too many requests at once; retry later' },
  internal: { status: 500, type: 'server_error', anthropic: 'api_error', message: 'Internal error in Engram' },
  upstream_unreachable: { status: 502, type: 'server_error', anthropic: 'api_error', message: 'The upstream provider could not be reached' },
  upstream_stream_failed: { status: 502, type: 'server_error', anthropic: 'api_error', message: 'The upstream stream ended abnormally' },
  upstream_timeout: { status: 504, type: 'server_error', anthropic: 'timeout_error', message: 'The upstream provider did not answer in time' },
  stream_time_limit: { status: 504, type: 'server_error', anthropic: 'timeout_error', message: 'The answer streamed for longer than Engram allows (ENGRAM_STREAM_MAX_MS)' },
  unavailable: { status: 503, type: 'server_error', anthropic: 'overloaded_error', message: 'Engram is shutting down' },
} as const;

export type ErrorCode = keyof typeof ERRORS;

/**
 * Which upstream a failure came from: the host (never the path, query or headers, where
 * keys live) and, once the conversation step knows it, the agent. Both go into the
 * message, which the log shows (its serializer keeps only type, code, message, stack)
 * and the client sees: the agent's own token may read its agent's upstream base anyway.
 */
export interface UpstreamOrigin {
  host: string;
  agentId?: string;
}

export class EngramError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly param: string | null;
  /** Where an upstream failure came from (`fromUpstream`). */
  upstream?: UpstreamOrigin;
  readonly #plainMessage: string;

  constructor(code: ErrorCode, message?: string, options?: { param?: string; cause?: unknown; upstream?: UpstreamOrigin }) {
    super(message ?? ERRORS[code].message, { cause: options?.cause });
    this.name = 'EngramError';
    this.code = code;
    this.status = ERRORS[code].status;
    this.param = options?.param ?? null;
    this.#plainMessage = this.message;
    if (options?.upstream) this.markUpstream(options.upstream);
  }

  /** Records where an upstream failure came from, and says it in the message. */
  markUpstream(origin: UpstreamOrigin): void {
    this.upstream = origin;
    this.message = `${this.#plainMessage} (upstream ${origin.host}${origin.agentId ? ` of agent ${origin.agentId}` : ''})`;
  }
}

/** The part of an upstream URL a log may show: host and port, never userinfo, path or query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an invalid URL';
  }
}

/**
 * Marks an upstream failure with where it came from: the host of `url` (the adapter
 * knows the URL) and the agent (the conversation step knows it), whichever is given
 * first kept. Anything that is not an upstream failure passes as is.
 */
export function fromUpstream<T>(error: T, origin: { url?: string; agentId?: string }): T {
  if (error instanceof EngramError && error.code.startsWith('upstream_')) {
    const host = error.upstream?.host ?? (origin.url === undefined ? 'unknown' : hostOf(origin.url));
    const agentId = error.upstream?.agentId ?? origin.agentId;
    error.markUpstream(agentId === undefined ? { host } : { host, agentId });
  }
  return error;
}

/** A size limit, as a 413 names it: what was too large, the limit, and the setting that raises it (none: fixed). */
export interface SizeLimit {
  /** `The request body`, `The transcript`, `A WebSocket frame`. */
  what: string;
  bytes: number;
  /** The variable that raises it (`ENGRAM_BODY_LIMIT`); absent when the limit is fixed. */
  setting?: string;
}

/** `32 MiB (33554432 bytes)`: the round figure a person reads, and the exact one a setting takes. */
export function describeBytes(bytes: number): string {
  const units: Array<[number, string]> = [
    [1024 ** 3, 'GiB'],
    [1024 ** 2, 'MiB'],
    [1024, 'KiB'],
  ];
  for (const [size, unit] of units) {
    if (bytes >= size) {
      const amount = bytes / size;
      return `${Number.isInteger(amount) ? amount : amount.toFixed(1)} ${unit} (${bytes} bytes)`;
    }
  }
  return `${bytes} bytes`;
}

/** The 413 of one limit: names the limit and what raises it, in every protocol's envelope. */
export function tooLarge(limit: SizeLimit): EngramError {
  const raise = limit.setting ? `; ${limit.setting} raises it` : '';
  return new EngramError('body_too_large', `${limit.what} is larger than the limit of ${describeBytes(limit.bytes)}${raise}`);
}

/**
 * Fastify's own 413 carries no figure. The proxy's parsers and the server's default take
 * `ENGRAM_BODY_LIMIT`, so that is the setting named when the caller gives no limit.
 */
const DEFAULT_BODY_TOO_LARGE = 'The request body is larger than the limit; ENGRAM_BODY_LIMIT raises it (32 MiB unless set)';

/**
 * Maps anything thrown (including Fastify's own errors) onto the catalogue. `bodyLimit`
 * is the limit behind a Fastify 413, when the caller knows it (`request.routeOptions.bodyLimit`).
 */
export function toEngramError(error: unknown, bodyLimit?: SizeLimit): EngramError {
  if (error instanceof EngramError) return error;
  const e = error as { code?: string; statusCode?: number; message?: string } | undefined;
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return bodyLimit ? tooLarge(bodyLimit) : new EngramError('body_too_large', DEFAULT_BODY_TOO_LARGE);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new EngramError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new EngramError('invalid_json');
  }
  if (e?.statusCode === 400) return new EngramError('invalid_request', e.message);
  if (e?.statusCode === 404) return new EngramError('not_found', e.message);
  if (e?.statusCode === 405) return new EngramError('method_not_allowed', e.message);
  if (e?.statusCode === 413) return bodyLimit ? tooLarge(bodyLimit) : new EngramError('body_too_large', DEFAULT_BODY_TOO_LARGE);
  if (e instanceof SyntaxError) return new EngramError('invalid_json', e.message);
  return new EngramError('internal', undefined, { cause: error });
}

/** The chat-completions / responses / management envelope. */
export function openAiErrorBody(error: EngramError): { error: { message: string; type: string; code: ErrorCode; param: string | null } } {
  return {
    error: {
      message: error.message,
      type: ERRORS[error.code].type,
      code: error.code,
      param: error.param,
    },
  };
}

/** The messages-API envelope. */
export function anthropicErrorBody(error: EngramError): unknown {
  return { type: 'error', error: { type: ERRORS[error.code].anthropic, message: error.message } };
}

/** A setting that is missing, malformed or inconsistent: reported before anything starts. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** A store the settings select (NATS, Weaviate) cannot be reached or used at start-up. */
export class StartupError extends Error {
  override name = 'StartupError';
}
