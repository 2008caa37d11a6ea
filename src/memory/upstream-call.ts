/**
 * Engram's own calls to an agent's upstream (extraction, tagging): sent with the agent's
 * key and extra headers, bounded in time and size, and their failures said in words
 * (`job-failure.ts`): those worth a retry, and the ones that would fail the same way again.
 */
import type { Agent, AgentSecrets, ProtocolId } from '../domain/types.js';
import { upstreamUrl } from '../domain/base-urls.js';
import type { ForcedToolCalls, JsonObject, UpstreamEndpoint } from '../protocols/types.js';
import type { UpstreamClient } from '../ports/index.js';
import { BodyTooLargeError, discard, readText } from './http-body.js';
import { callFailure, JobFailure, upstreamRefusal } from './job-failure.js';

export const DEFAULT_TIMEOUT_MS = 90_000;
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/** What of a protocol a memory job uses: where to call, and the forced-tool call. */
export type JobProtocol = UpstreamEndpoint & ForcedToolCalls;

/** What a background job (extraction, tagging) needs to call an agent's upstream. */
export interface JobUpstream {
  adapter: JobProtocol;
  secrets: AgentSecrets;
  model: string;
}

/**
 * The adapter, secrets and model a job of `agent` calls its upstream with: the job's
 * protocol, the agent's extraction model or else the job's. Throws a permanent
 * `JobFailure` when the job can never run (no adapter, no model); `skip` when the agent
 * was deleted under it.
 */
export async function jobUpstream(
  deps: { control: { agentSecrets(agentId: string): Promise<AgentSecrets | undefined> }; protocols: Partial<Record<ProtocolId, JobProtocol>> },
  agent: Agent,
  job: { protocol: ProtocolId; model: string },
): Promise<JobUpstream | { skip: string }> {
  const adapter = deps.protocols[job.protocol];
  if (!adapter) throw new JobFailure('malformed_job', `no protocol adapter for ${job.protocol}`, { permanent: true });
  const secrets = await deps.control.agentSecrets(agent.id);
  if (!secrets) return { skip: 'agent deleted' };
  const model = agent.memory.extractionModel ?? job.model;
  if (!model) throw new JobFailure('malformed_job', 'no model to call: the job names none and the agent sets no extraction model', { permanent: true });
  return { adapter, secrets, model };
}

export interface UpstreamCall {
  upstream: UpstreamClient;
  agent: Agent;
  secrets: AgentSecrets;
  adapter: UpstreamEndpoint;
  /** The request body (`ForcedToolCalls.toolRequest`). */
  body: JsonObject;
  timeoutMs?: number;
}

/**
 * Sends `body` to the agent's upstream and reads the answer whole: its parsed JSON body.
 * Throws a `JobFailure` otherwise: the upstream refused (its status; permanent for a 4xx
 * other than 408/409/425/429), could not be reached, did not answer in time, or answered
 * 2xx with something that is not JSON.
 */
export async function callUpstream(call: UpstreamCall): Promise<unknown> {
  const { agent, secrets, adapter } = call;
  const timeoutMs = call.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let text: string;
  try {
    const response = await call.upstream.send({
      url: upstreamUrl(agent.upstream.baseUrl, adapter.upstreamPath),
      method: 'POST',
      headers: {
        ...lowerCaseKeys(secrets.upstreamHeaders),
        'content-type': 'application/json',
        accept: 'application/json',
        ...lowerCaseKeys(adapter.upstreamAuth(secrets.upstreamApiKey)),
      },
      body: JSON.stringify(call.body),
      signal: AbortSignal.timeout(timeoutMs),
      setBy: agent.upstream.setBy,
    });
    if (response.status < 200 || response.status > 299) {
      // What the upstream wrote is not read into the reason: it may quote the request.
      await discard(response.body);
      throw upstreamRefusal(response.status);
    }
    text = await readText(response.body, MAX_RESPONSE_BYTES);
  } catch (error) {
    if (error instanceof JobFailure) throw error;
    if (error instanceof BodyTooLargeError) {
      throw new JobFailure('bad_answer', `the upstream's answer is larger than ${MAX_RESPONSE_BYTES / (1024 * 1024)} MB`, { cause: error });
    }
    throw callFailure(error, timeoutMs);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new JobFailure('bad_answer', "the upstream's answer is not JSON");
  }
}

export function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
