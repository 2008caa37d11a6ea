/**
 * "Test connection" on the agent form: asks the upstream for its model list with the key
 * and headers as typed, through the same upstream client (and address policy) the proxy
 * uses, and says in plain words what came back. Nothing is stored.
 */
import type { UpstreamClient } from '../../ports/upstream.js';
import { toEngramError } from '../../errors.js';
import { modelIds } from '../../connect/models.js';
import { readText } from '../../memory/http-body.js';
import { DEFAULT_ANTHROPIC_VERSION } from '../../protocols/messages/adapter.js';

export interface ConnectionCheck {
  ok: boolean;
  /** One sentence for the person. */
  summary: string;
  /** What the upstream answered: the first model ids, or the start of its error body. */
  detail: string;
}

/** A provider's model list can be long (hundreds of models): bounded well above that. */
const MAX_BODY = 4 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

/** `baseUrl` as the management API cleans it (`upstreamBaseUrl`): `/v1/models` is appended. */
export async function checkUpstream(upstream: UpstreamClient, baseUrl: string, apiKey: string, headers: Record<string, string>): Promise<ConnectionCheck> {
  const url = new URL(`${baseUrl}/v1/models`);
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey } : {};
  try {
    const response = await upstream.send({
      url: url.href,
      method: 'GET',
      headers: { ...auth, 'anthropic-version': DEFAULT_ANTHROPIC_VERSION, accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headersTimeoutMs: TIMEOUT_MS,
    });
    const text = await readText(response.body, MAX_BODY);
    if (response.status >= 200 && response.status < 300) {
      const ids = modelIds(parsed(text)) ?? [];
      return {
        ok: true,
        summary: `Connected: ${url.origin} answered ${response.status}${ids.length ? ` and lists ${ids.length} model${ids.length === 1 ? '' : 's'}` : ''}.`,
        detail: ids.slice(0, 12).join(', '),
      };
    }
    const hint = response.status === 401 || response.status === 403 ? ' Check the API key.' : response.status === 404 ? ' Check the base URL (Engram appends /v1/...).' : '';
    return { ok: false, summary: `${url.origin} answered ${response.status}.${hint}`, detail: text.slice(0, 500) };
  } catch (error) {
    return { ok: false, summary: `Could not reach ${url.origin}: ${toEngramError(error).message}`, detail: '' };
  }
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
