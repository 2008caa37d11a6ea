import type { Relaying } from '../../../machines/conversation.machine.js';
import type { Deps } from '../../deps.js';
import { fromUpstream } from '../../errors.js';
import { relay as relayAnswer } from '../../streaming/relay.js';
import type { EngramTurn, Relayed } from '../exchange.js';
import { clientHeaders, engramHeaders } from '../headers.js';

/** Sends the upstream's answer on to the client as it comes, teeing it for the settling steps; `final` when it is worth learning from. */
export async function relay(
  { upstream, config }: Pick<Deps, 'upstream' | 'config'>,
  { request, authenticated, injected, forwarded }: Relaying<EngramTurn>,
  signal: AbortSignal,
): Promise<Relayed> {
  const upstreamResponse = forwarded;
  const headers = { ...clientHeaders(upstreamResponse.headers), ...engramHeaders(injected.injected, request.requestId) };
  const sse = String(upstreamResponse.headers['content-type'] ?? '').includes('text/event-stream');
  request.sink.writeHead(upstreamResponse.status, headers, sse);
  const outcome = await relayAnswer({
    body: upstreamResponse.body,
    sink: request.sink,
    adapter: request.adapter,
    sse,
    signal,
    failure: (error) => {
      const { agent } = authenticated;
      return fromUpstream(upstream.failure(error), { agentId: agent.id, url: agent.upstream.baseUrl });
    },
    maxEventBytes: config.sseMaxEventBytes,
    maxAnswerBytes: config.answerMaxBytes,
    maxStreamMs: config.streamMaxMs,
  });
  const final = outcome.outcome === 'completed' && outcome.answer.final && !outcome.answer.errored;
  return { ...outcome, final };
}
