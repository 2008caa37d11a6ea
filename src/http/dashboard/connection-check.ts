/**
 * "Test connection" on the agent form: asks the upstream for its model list with the key
 * and headers as typed, through the same upstream client (and address policy) the proxy
 * uses, and says in plain words what came back. Nothing is stored.
 */
import type { UpstreamClient } from '../../ports/upstream.js';
import { toEngramError } from '../../errors.js';

export interface ConnectionCheck {
  ok: boolean;
  /** One sentence for the person. */
  summary: string;
  /** What the upstream answered: the first model ids, or the start of its error body. */
  detail: string;
}

const MAX_BODY = 64 * 1024;
const TIMEOUT_MS = 10_000;

async function readSome(body: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    chunks.push(buffer);
    size += buffer.length;
    if (size >= MAX_BODY) break;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_BODY);
}

export async function checkUpstream(upstream: UpstreamClient, baseUrl: string, apiKey: string, headers: Record<string, string>): Promise<ConnectionCheck> {
  let url: URL;
  try {
    url = new URL(baseUrl.replace(/\/+$/, '') + '/v1/models');
  } catch {
    return { ok: false, summary: 'The base URL is not a URL.', detail: baseUrl };
  }
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}`, 'x-api-key': apiKey } : {};
  try {
    const response = await upstream.send({
      url: url.href,
      method: 'GET',
      headers: { ...auth, 'anthropic-version': '2023-06-01', accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headersTimeoutMs: TIMEOUT_MS,
    });
    const text = await readSome(response.body);
    if (response.status >= 200 && response.status < 300) {
      const ids = modelIds(text);
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

function modelIds(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as { data?: Array<{ id?: unknown }> };
    return (parsed.data ?? []).map((model) => model.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return [];
  }
}
