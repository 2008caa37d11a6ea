/**
 * Engram's own calls to an agent's upstream (extraction, tagging): sent with the agent's
 * key and extra headers, bounded in time and size, and their failures sorted into the
 * ones worth a retry and the ones that would fail the same way again.
 */
import type { Readable } from 'node:stream';
import type { Agent, AgentSecrets, ProtocolId } from '../domain/types.js';
import { redactSecrets } from '../domain/redact.js';
import type { JsonObject, ProtocolAdapter } from '../protocols/types.js';
import type { UpstreamClient } from '../ports/index.js';
import { discard, readText } from './http-body.js';

export const DEFAULT_TIMEOUT_MS = 90_000;
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/**
 * Upstream statuses worth a retry. Every other 4xx (bad request, auth, unknown model,
 * too large) would fail the same way again: the job is dead-lettered at once with the
 * reason instead of spending the remaining deliveries on it.
 */
export const RETRYABLE_4XX: ReadonlySet<number> = new Set([408, 409, 425, 429]);

/** What a background job (extraction, tagging) needs to call an agent's upstream. */
export interface JobUpstream {
  adapter: ProtocolAdapter;
  secrets: AgentSecrets;
  model: string;
}

/**
 * The adapter, secrets and model a job of `agent` calls its upstream with: the job's
 * protocol, the agent's extraction model or else the job's. `term` when the job can never
 * run (no adapter, no model); `skip` when the agent was deleted under it.
 */
export async function jobUpstream(
  deps: { control: { agentSecrets(agentId: string): Promise<AgentSecrets | undefined> }; protocols: Partial<Record<ProtocolId, ProtocolAdapter>> },
  agent: Agent,
  job: { protocol: ProtocolId; model: string },
): Promise<JobUpstream | { term: string } | { skip: string }> {
  const adapter = deps.protocols[job.protocol];
  if (!adapter) return { term: `no protocol adapter for ${job.protocol}` };
  const secrets = await deps.control.agentSecrets(agent.id);
  if (!secrets) return { skip: 'agent deleted' };
  const model = agent.memory.extractionModel ?? job.model;
  if (!model) return { term: 'no model to call' };
  return { adapter, secrets, model };
}

export interface UpstreamCall {
  upstream: UpstreamClient;
  agent: Agent;
  secrets: AgentSecrets;
  adapter: ProtocolAdapter;
  /** The request body (`ProtocolAdapter.toolRequest`). */
  body: JsonObject;
  timeoutMs?: number;
}

/** The upstream's answer: its parsed JSON body, or why it refused. */
export type UpstreamAnswer =
  | { ok: true; body: unknown }
  | {
      ok: false;
      status: number;
      /** `upstream answered 401: <the upstream's own message, short and redacted>`. */
      reason: string;
      /** A 4xx other than 408/409/425/429: a retry would fail the same way. */
      permanent: boolean;
    };

/**
 * Sends `body` to the agent's upstream and reads the answer whole. Resolves with the
 * parsed body or the refusal; rejects when the upstream cannot be reached, times out, or
 * answers 2xx with something that is not JSON (each worth a retry).
 */
export async function callUpstream(call: UpstreamCall): Promise<UpstreamAnswer> {
  const { agent, secrets, adapter } = call;
  const response = await call.upstream.send({
    url: agent.upstream.baseUrl.replace(/\/+$/, '') + adapter.upstreamPath,
    method: 'POST',
    headers: {
      ...lowerCaseKeys(secrets.upstreamHeaders),
      'content-type': 'application/json',
      accept: 'application/json',
      ...lowerCaseKeys(adapter.upstreamAuth(secrets.upstreamApiKey)),
    },
    body: JSON.stringify(call.body),
    signal: AbortSignal.timeout(call.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    setBy: agent.upstream.setBy,
  });
  if (response.status < 200 || response.status > 299) {
    const detail = await failureDetail(response.body);
    return {
      ok: false,
      status: response.status,
      reason: `upstream answered ${response.status}${detail ? `: ${detail}` : ''}`,
      permanent: response.status >= 400 && response.status < 500 && !RETRYABLE_4XX.has(response.status),
    };
  }
  const text = await readText(response.body, MAX_RESPONSE_BYTES);
  try {
    return { ok: true, body: JSON.parse(text) };
  } catch {
    throw new Error('the upstream answer is not JSON');
  }
}

/** The upstream's own error message, short and redacted, for the dead-letter reason. */
export async function failureDetail(body: Readable): Promise<string> {
  let text: string;
  try {
    text = await readText(body, 64 * 1024);
  } catch {
    await discard(body);
    return '';
  }
  let message = text;
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    const candidate = typeof parsed.error === 'object' ? parsed.error?.message : parsed.error ?? parsed.message;
    if (typeof candidate === 'string') message = candidate;
  } catch {
    // Not JSON: keep the raw text.
  }
  return redactSecrets(message.replace(/\s+/g, ' ').trim()).slice(0, 300);
}

export function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
