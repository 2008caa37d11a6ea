/**
 * What the request log may say about a URL. A client that puts a credential in a query
 * string (`?token=`, `?api_key=`) or a path segment must not find it in the log: query
 * values of secret-named parameters are replaced whole, and any other value or segment
 * that looks like a credential (a known key format, an Engram token, a long random
 * string) is replaced too. Engram's own ids and UUIDs stay readable.
 */
import { TOKEN_PREFIX } from '../domain/token-strength.js';
import { redactSecrets } from './redact.js';

export const REDACTED = '[REDACTED]';

/** Parameter names whose value is a credential whatever it looks like. */
const SECRET_PARAM =
  /(?:^|[-_.])(?:token|access_?token|refresh_?token|id_?token|key|api_?key|apikey|secret|client_?secret|password|passwd|pwd|pass|auth|authorization|credentials?|signature|sig|session|code|jwt|bearer)$/i;

/** `agt_`, `org_`, `tok_`, `resp_` ... and 16 base62; `ref_` and 24 hex (src/domain/ids.ts, src/memory/reflection-id.ts). */
const ENGRAM_ID = /^(?:[a-z]{2,5}_[0-9A-Za-z]{16}|ref_[0-9a-f]{24})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Long, credential-alphabet strings mixing letters and digits: what a random key looks like. */
const RANDOM_LOOKING = /^[A-Za-z0-9_\-.~+/=]{24,}$/;

function credentialShaped(value: string): boolean {
  if (value === '' || ENGRAM_ID.test(value) || UUID.test(value)) return false;
  if (value.startsWith(TOKEN_PREFIX)) return true;
  if (redactSecrets(value) !== value) return true;
  return RANDOM_LOOKING.test(value) && /[A-Za-z]/.test(value) && /\d/.test(value) && !/^[a-z]+(?:[-_.][a-z]+)*$/i.test(value);
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    return part;
  }
}

/** The URL as the log may show it: path segments and query values that carry credentials replaced. */
export function safeUrl(url: string): string {
  const mark = url.indexOf('?');
  const path = mark < 0 ? url : url.slice(0, mark);
  const safePath = path
    .split('/')
    .map((segment) => (credentialShaped(decoded(segment)) ? REDACTED : segment))
    .join('/');
  if (mark < 0) return safePath;
  const query = url
    .slice(mark + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      if (equals < 0) return credentialShaped(decoded(name)) ? REDACTED : pair;
      const value = decoded(pair.slice(equals + 1));
      return SECRET_PARAM.test(decoded(name)) || credentialShaped(value) || redactSecrets(value) !== value
        ? `${name}=${REDACTED}`
        : pair;
    })
    .join('&');
  return `${safePath}?${query}`;
}

/** What the log reads of a request: a Fastify request's fields. */
interface LoggedRequest {
  method: string;
  url: string;
  host: string;
  ip: string;
  socket?: { remotePort?: number };
}

/** Fastify's request serializer with the URL made safe (the rest as Fastify logs it by default). */
export function safeRequestSerializer(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: safeUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

/** Engram tokens anywhere in a text (an error message quoting a header, a URL). */
const ENGRAM_TOKEN_IN_TEXT = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]{8,}`, 'g');

/** A text as the log may show it: known credential formats and Engram tokens replaced. */
export function safeText(text: string): string {
  return redactSecrets(text).replace(ENGRAM_TOKEN_IN_TEXT, REDACTED);
}

interface SerializedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

/** Characters of a plain object's JSON an error line shows when it has no `message`. */
const MAX_OBJECT_TEXT = 500;

/**
 * An error as the log shows it: type, code, message and stack made safe (an error may
 * quote its input), causes too. Anything thrown is accepted, not only an `Error`: a plain
 * object keeps its `message`, `code` and `type` (or `name`), and a line already serialized
 * by this function (it reaches pino's `err` serializer a second time) comes out the same,
 * never as `[object Object]`.
 */
export function safeErrorSerializer(error: unknown, depth = 0): SerializedError {
  const cause = (value: unknown) => (value !== undefined && depth < 4 ? { cause: safeErrorSerializer(value, depth + 1) } : {});
  if (error instanceof Error) {
    const { code } = error as { code?: unknown };
    return {
      type: error.name,
      message: safeText(error.message),
      ...(code !== undefined ? { code } : {}),
      stack: safeText(error.stack ?? ''),
      ...cause(error.cause),
    };
  }
  if (typeof error !== 'object' || error === null) return { type: typeof error, message: safeText(String(error)), stack: '' };
  const { type, name, message, code, stack, cause: inner } = error as Record<string, unknown>;
  return {
    type: typeof type === 'string' ? type : typeof name === 'string' ? name : 'object',
    message: safeText(typeof message === 'string' ? message : objectText(error)),
    ...(code !== undefined ? { code } : {}),
    stack: typeof stack === 'string' ? safeText(stack) : '',
    ...cause(inner),
  };
}

/** A thrown object without a message, as bounded JSON (a cycle or a BigInt cannot stop the log line). */
function objectText(value: object): string {
  try {
    const text = JSON.stringify(value) ?? String(value);
    return text.length > MAX_OBJECT_TEXT ? `${text.slice(0, MAX_OBJECT_TEXT)}…` : text;
  } catch {
    return Object.prototype.toString.call(value);
  }
}
