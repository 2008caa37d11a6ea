import { toEngramError, type EngramError } from '../errors.js';
import type { ExchangeSummary, UpstreamErrorKind } from '../observability/metrics.js';
import type { ExchangeRequest, ExchangeResults } from './exchange.js';
import type { ConversationFlow } from './actors.js';

export interface ExchangeHooks {
  /** Registers the callback run when the client goes away before the answer is complete. */
  onClientGone(callback: () => void): void;
  /** Pino-compatible (structured fields first), as Fastify's request logger is. */
  log: { info(fields: object, message: string): void; error(fields: object, message: string): void; warn(fields: object, message: string): void };
  /** Told how the exchange ended: the app's metrics. */
  observer?: ExchangeObserver;
}

/** Told how each exchange ended (the app's metrics). */
export interface ExchangeObserver {
  exchangeFinished(summary: ExchangeSummary): void;
}

/** What went wrong upstream, from the machine's final status and error. */
function upstreamErrorOf(status: string, results: ExchangeResults, error: EngramError | undefined): UpstreamErrorKind | undefined {
  if (status === 'upstream_error') return (results.forward?.status ?? 500) >= 500 ? 'status_5xx' : 'status_4xx';
  if (status === 'interrupted') return 'stream_broken';
  if (error?.code === 'upstream_unreachable') return 'unreachable';
  if (error?.code === 'upstream_timeout') return 'timeout';
  if (error?.code === 'upstream_stream_failed') return 'stream_broken';
  return undefined;
}

/**
 * Runs one conversation actor to its end and answers the client with an error in the
 * protocol's envelope when a step failed before any byte was sent.
 */
export async function runExchange(flow: ConversationFlow, request: ExchangeRequest, hooks: ExchangeHooks): Promise<void> {
  // Engram's own time: until the upstream request starts, and from the end of the upstream's answer.
  const startedAt = performance.now();
  let forwardAt: number | undefined;
  let upstreamDoneAt: number | undefined;
  const run = flow.run(
    { request },
    {
      onState(state) {
        if (state === 'forwarding') forwardAt ??= performance.now();
        else if (forwardAt !== undefined && state !== 'relaying') upstreamDoneAt ??= performance.now();
      },
    },
  );
  hooks.onClientGone(() => run.send({ type: 'CLIENT_GONE' }));
  const output = await run.done;
  const results = output.results as ExchangeResults;
  let sentStatus: number | undefined = results.forward?.status;
  const report = (error?: EngramError) => {
    const doneAt = performance.now();
    const addedMs = forwardAt === undefined ? undefined : forwardAt - startedAt + (doneAt - (upstreamDoneAt ?? doneAt));
    const body = results.resolveConversation?.body;
    const summary: ExchangeSummary = {
      agentId: request.agentId,
      protocol: request.adapter.id,
      outcome: output.status,
      upstreamError: upstreamErrorOf(output.status, results, error),
      injected: results.inject?.injected ?? 0,
      addedMs,
    };
    // Only for a token that was accepted: an unknown agent id must not become a metric series.
    if (results.authenticate) hooks.observer?.exchangeFinished(summary);
    hooks.log.info(
      {
        orgId: request.orgId,
        agentId: request.agentId,
        protocol: request.adapter.id,
        model: body ? request.adapter.model(body) : undefined,
        status: sentStatus,
        outcome: output.status,
        ...(summary.upstreamError ? { upstreamError: summary.upstreamError } : {}),
        ...(error ? { error: error.code } : {}),
        addedMs: addedMs === undefined ? undefined : Math.round(addedMs * 10) / 10,
        injected: summary.injected,
      },
      'proxied request finished',
    );
  };
  const relayed = results.relay;
  if (relayed?.outcome === 'completed' && relayed.unassembled !== undefined) {
    hooks.log.warn(
      { orgId: request.orgId, agentId: request.agentId, bytes: relayed.unassembled },
      'the upstream answer held an event over the size limit: relayed to the client whole, not learnt from',
    );
  }
  if (output.status !== 'failed') {
    request.sink.end();
    report();
    return;
  }

  const error = toEngramError(output.error);
  if (error.code === 'internal') hooks.log.error({ err: output.error }, 'proxy step failed');
  const { sink, adapter } = request;
  if (!sink.headersSent) {
    const rendered = adapter.renderError(error);
    sentStatus = rendered.status;
    sink.writeHead(rendered.status, {
      'content-type': 'application/json',
      'x-engram-injected': String(results.inject?.injected ?? 0),
    });
    sink.write(Buffer.from(JSON.stringify(rendered.body)));
    sink.end();
  } else if (!results.relay) {
    // Failed while relaying, for a reason the relay could not report in-stream.
    sink.fail(undefined);
  } else {
    // The answer was relayed whole; only recording it for extraction failed.
    hooks.log.error({ err: output.error }, 'settling a conversation failed');
    request.sink.end();
  }
  report(error);
}
