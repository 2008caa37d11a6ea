/**
 * The upstream check, one for both callers: the dashboard's "Test connection" on the agent
 * form and the management API's `POST /v0/upstream-check` (which `engram agent create`
 * calls before creating anything). It asks the upstream for its model list with the key
 * and headers as given, through the same upstream client the proxy uses, under the
 * address policy of whoever sets the upstream, and says in plain words what came back.
 * Nothing is stored.
 *
 * The answer is the status and a short reason of Engram's own words, never any of the
 * upstream's text: the person typing the URL need not be the operator, and a "test"
 * that echoed a body would read any service Engram can reach for them.
 */
import { STATUS_CODES } from 'node:http';
import type { UpstreamClient } from '../ports/upstream.js';
import type { UpstreamOwner } from '../domain/types.js';
import { upstreamUrl } from '../domain/base-urls.js';
import { EngramError } from '../errors.js';
import { modelIds } from '../connect/models.js';
import { discard, readText } from '../memory/http-body.js';
import { DEFAULT_ANTHROPIC_VERSION } from '../protocols/messages/adapter.js';
import { parseJsonOr } from '../protocols/shared.js';
import { isAddressRefusal } from '../security/address-policy.js';
import { parseAgentPatch } from './management/agent-input.js';

export interface ConnectionCheck {
  ok: boolean;
  /** One sentence for the person, in Engram's words only. */
  summary: string;
}

/** A provider's model list can be long (hundreds of models): bounded well above that. */
const MAX_BODY = 4 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

export interface CheckTarget {
  /** As the management API cleans it (`upstreamBaseUrl`): `/v1/models` is appended. */
  baseUrl: string;
  apiKey: string;
  headers: Record<string, string>;
  /** Whose address policy applies: the operator's (admin token) or the dashboard users'. */
  setBy: UpstreamOwner;
}

/**
 * The check of an agent body's `upstream` part (`{base_url, api_key?, headers?}`), cleaned
 * and refused by the same parser that saving the agent uses (a pasted `/v1` dropped, the
 * same headers refused): its mistakes throw that parser's `invalid_request`, for the caller
 * to show in its own shape.
 */
export function checkUpstreamBody(upstream: UpstreamClient, body: unknown, setBy: UpstreamOwner): Promise<ConnectionCheck> {
  const { upstream: settings, secrets } = parseAgentPatch({ upstream: body });
  if (settings?.baseUrl === undefined) throw new EngramError('invalid_request', '`upstream.base_url` is required', { param: 'upstream.base_url' });
  return checkUpstream(upstream, { baseUrl: settings.baseUrl, apiKey: secrets?.upstreamApiKey ?? '', headers: settings.headers ?? {}, setBy });
}

export async function checkUpstream(upstream: UpstreamClient, target: CheckTarget): Promise<ConnectionCheck> {
  const url = new URL(upstreamUrl(target.baseUrl, '/v1/models'));
  const auth: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}`, 'x-api-key': target.apiKey } : {};
  try {
    const response = await upstream.send({
      url: url.href,
      method: 'GET',
      headers: { ...auth, 'anthropic-version': DEFAULT_ANTHROPIC_VERSION, accept: 'application/json', ...target.headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headersTimeoutMs: TIMEOUT_MS,
      setBy: target.setBy,
    });
    const status = `${response.status} ${STATUS_CODES[response.status] ?? ''}`.trim();
    if (response.status < 200 || response.status > 299) {
      await discard(response.body);
      // A 404 names the path asked, since the base URL's path is what is wrong.
      if (response.status === 404) return { ok: false, summary: `${url.origin} answered ${status} at ${url.pathname}. Check the base URL (Engram appends /v1/...).` };
      const hint = response.status === 401 || response.status === 403 ? ' Check the API key.' : '';
      return { ok: false, summary: `${url.origin} answered ${status}.${hint}` };
    }
    // Only how many models: the ids are the upstream's text.
    const count = modelIds(parseJsonOr(await readText(response.body, MAX_BODY), undefined))?.length ?? 0;
    return { ok: true, summary: `Connected: ${url.origin} answered ${status}${count ? ` and lists ${count} model${count === 1 ? '' : 's'}` : ''}.` };
  } catch (error) {
    return { ok: false, summary: `Could not connect to ${url.origin}: ${failureReason(error)}.` };
  }
}

const NETWORK_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'the connection was reset',
  EPIPE: 'the connection was reset',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out',
};

/**
 * Why no answer came, from a fixed list: an address refusal is Engram's own sentence;
 * anything else is named by its code only, since a transport error's message can quote
 * what the other end sent (a malformed status line, say).
 */
function failureReason(error: unknown): string {
  if (isAddressRefusal(error)) return refusalOf(error);
  if (error instanceof EngramError && error.code === 'upstream_timeout') return 'timed out';
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    if (current.name === 'TimeoutError' || current.name === 'AbortError') return 'timed out';
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_REASONS[code]) return NETWORK_REASONS[code];
  }
  return 'no HTTP answer';
}

/** `refused: 127.0.0.1 is a loopback address and … is off`, from the policy's own message. */
function refusalOf(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  const why = /is refused: (.*)$/.exec(message)?.[1];
  return why ? `refused: ${why.replace(/\.$/, '')}` : 'refused by the address policy';
}
