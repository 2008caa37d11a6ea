import type { Forwarding } from '../../../machines/conversation.machine.js';
import { upstreamUrl } from '../../domain/base-urls.js';
import type { Deps } from '../../deps.js';
import { EngramError, fromUpstream } from '../../errors.js';
import type { EngramTurn, Forwarded } from '../exchange.js';
import { upstreamHeaders } from '../headers.js';

/**
 * Sends the request, Engram's blocks added, to the agent's upstream: its answer's status and
 * headers, its body still to read. The reflections injected count as used once the upstream
 * has answered the request: a client that leaves before then, or a refused request, used none.
 */
export async function forward(
  { control, upstream, config, reflections, now }: Pick<Deps, 'control' | 'upstream' | 'config' | 'reflections' | 'now'>,
  { request, authenticated, resolved, injected }: Forwarding<EngramTurn>,
  signal: AbortSignal,
): Promise<Forwarded> {
  const { agent } = authenticated;
  const secrets = await control.agentSecrets(agent.id);
  if (!secrets) throw new EngramError('internal', 'The agent has no upstream credentials');
  const { adapter } = request;
  const response = await upstream
    .send({
      url: upstreamUrl(agent.upstream.baseUrl, adapter.upstreamPath, request.search),
      method: 'POST',
      headers: upstreamHeaders(request.headers, adapter.upstreamAuth(secrets.upstreamApiKey), secrets.upstreamHeaders),
      body: injected.forwardBody,
      signal,
      setBy: agent.upstream.setBy,
      // A streamed answer's headers come at once: one that sends none is hung, and the
      // client hears so after the idle timeout, not the long wait an answer sent whole needs.
      headersTimeoutMs: resolved.body.stream === true ? config.upstreamIdleTimeoutMs : undefined,
    })
    // The log of a failure names the agent and the upstream's host (never the key).
    .catch((error: unknown) => {
      throw fromUpstream(error, { agentId: agent.id, url: agent.upstream.baseUrl });
    });
  const ok = response.status >= 200 && response.status < 300;
  const used = injected.reflections.map((reflection) => reflection.reflectionId);
  if (ok && used.length > 0) void reflections.markUsed(agent.id, used, now()).catch(() => undefined);
  return { ok, ...response };
}
