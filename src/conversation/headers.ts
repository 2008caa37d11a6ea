/**
 * What crosses the proxy in each direction. Hop-by-hop headers never do; neither do the
 * client's credentials (Engram's token, or the client's own provider key) nor
 * `accept-encoding`, so that the upstream answers in plain bytes the tee can read.
 */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = (
  'connection keep-alive proxy-connection proxy-authenticate proxy-authorization te trailer trailers ' +
  'transfer-encoding upgrade'
).split(' ');

const NOT_FORWARDED = new Set([
  ...HOP_BY_HOP,
  ...'host content-length content-type accept-encoding expect cookie'.split(' '),
  ...'authorization x-api-key x-engram-api-key x-service-api-key x-engram-conversation'.split(' '),
  // The app's end user and the project are Engram's to know, not the provider's.
  'x-engram-scope',
  'x-engram-user',
]);

/**
 * `content-length` is not returned either: with it a client has the whole answer as soon
 * as the last byte arrives, before Engram has recorded the turn (a Responses record read
 * back at once, the conversation state of the next turn). Chunked, the answer ends when
 * the turn is recorded.
 */
const NOT_RETURNED = new Set([...HOP_BY_HOP, 'set-cookie', 'content-length']);

/** Names listed in a `Connection` header are hop-by-hop too (RFC 9110 section 7.6.1). */
function connectionListed(headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>): Set<string> {
  const value = headers.connection;
  const text = Array.isArray(value) ? value.join(',') : value ?? '';
  return new Set(text.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean));
}

/** How many reflections were injected into the forwarded request (`0` for an answer that forwarded none). */
export const INJECTED_HEADER = 'x-engram-injected';
/** `req_…`: the turn's entry in the request log (the WebSocket sink turns it into the frames' `engram_request_id`). */
export const REQUEST_ID_HEADER = 'x-engram-request-id';

/** The headers every answer of the proxy carries, whatever its outcome. */
export function engramHeaders(injected: number, requestId: string): Record<string, string> {
  return { [INJECTED_HEADER]: String(injected), [REQUEST_ID_HEADER]: requestId };
}

export function upstreamHeaders(client: IncomingHttpHeaders, auth: Record<string, string>, extra: Record<string, string>): Record<string, string> {
  const listed = connectionListed(client);
  const headers: Record<string, string> = { ...auth };
  for (const [name, value] of Object.entries(client)) {
    if (value === undefined || NOT_FORWARDED.has(name) || listed.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  for (const [name, value] of Object.entries(extra)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  return headers;
}

export function clientHeaders(upstream: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  const listed = connectionListed(upstream);
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || NOT_RETURNED.has(name) || listed.has(name)) continue;
    headers[name] = value;
  }
  return headers;
}

/**
 * The headers of a WebSocket upgrade, as a turn bridged to the upstream over HTTP needs
 * them: without the handshake's own headers, and without the `openai-beta` token that
 * asks for WebSocket mode (the upstream sees a plain streaming POST).
 */
export function bridgedHeaders(upgrade: IncomingHttpHeaders): IncomingHttpHeaders {
  const headers: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(upgrade)) {
    if (name.startsWith('sec-websocket-')) continue;
    if (name === 'openai-beta' && value !== undefined) {
      const kept = (Array.isArray(value) ? value.join(',') : value)
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token && !token.startsWith('responses_websockets'));
      if (kept.length > 0) headers[name] = kept.join(', ');
      continue;
    }
    headers[name] = value;
  }
  return headers;
}
