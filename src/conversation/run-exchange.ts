import { createActor, toPromise } from 'xstate';
import type { ConversationOutput, TurnInput } from '../../machines/conversation.machine.js';
import { toEngramError, type EngramError } from '../errors.js';
import type { AnswerLimit } from '../ports/index.js';
import type { EngramTurn, ExchangeRequest, InjectedMemory, Relayed } from './exchange.js';
import type { ConversationFlow } from './actors.js';
import { newRequestId } from '../domain/request-log.js';
import { recordRequest } from './request-log.js';
import { engramHeaders } from './headers.js';

export interface ExchangeHooks {
  /** Registers the callback run when the client goes away before the answer is complete. */
  onClientGone(callback: () => void): void;
  /** Pino-compatible (structured fields first), as Fastify's request logger is. */
  log: { info(fields: object, message: string): void; error(fields: object, message: string): void; warn(fields: object, message: string): void };
  /** Told how the exchange ended: the app's metrics. */
  observer?: ExchangeObserver;
}

/** How one proxied exchange ended, as `runExchange` saw it. */
export interface ExchangeSummary {
  agentId: string;
  protocol: string;
  /** The conversation machine's final status: settled, upstream_error, interrupted, failed, aborted. */
  outcome: string;
  /** What the upstream's failure was, when it failed: see `UPSTREAM_ERROR_KINDS`. */
  upstreamError?: UpstreamErrorKind;
  /** Reflections injected into the forwarded request. */
  injected: number;
  /** Time Engram added before the upstream request and after the upstream's answer ended, in ms (absent when nothing was forwarded). */
  addedMs?: number;
}

export const UPSTREAM_ERROR_KINDS = ['status_4xx', 'status_5xx', 'stream_broken', 'unreachable', 'timeout'] as const;
export type UpstreamErrorKind = (typeof UPSTREAM_ERROR_KINDS)[number];

/** Told how each exchange ended (the app's metrics). */
export interface ExchangeObserver {
  exchangeFinished(summary: ExchangeSummary): void;
  /** A turn's request log entry could not be written. */
  requestLogFailed?(): void;
}

/** A turn as a transport hands it over: the request id is given here unless the transport chose one. */
export interface ExchangeInput extends Omit<TurnInput<EngramTurn>, 'request'> {
  request: Omit<ExchangeRequest, 'requestId'> & { requestId?: string };
}

/** Which of Engram's bounds on answers the turn met (`RequestEntry.answerLimit`). */
function answerLimitOf(relayed: Relayed | undefined): AnswerLimit | null {
  if (relayed?.outcome === 'failed') return relayed.error.code === 'stream_time_limit' ? 'stream_max_ms' : null;
  if (relayed?.outcome !== 'completed') return null;
  if (relayed.unassembled !== undefined) return 'sse_max_event_bytes';
  return relayed.answer.truncated ? 'answer_max_bytes' : null;
}

/** What went wrong upstream, from the machine's final status and error. */
function upstreamErrorOf(status: string, output: ConversationOutput<EngramTurn>, error: EngramError | undefined): UpstreamErrorKind | undefined {
  if (status === 'upstream_error') return (output.forwarded?.status ?? 500) >= 500 ? 'status_5xx' : 'status_4xx';
  // Cut by Engram's own time limit: the upstream did nothing wrong.
  if (status === 'interrupted') return output.relayed?.outcome === 'failed' && output.relayed.error.code === 'stream_time_limit' ? undefined : 'stream_broken';
  if (error?.code === 'upstream_unreachable') return 'unreachable';
  if (error?.code === 'upstream_timeout') return 'timeout';
  if (error?.code === 'upstream_stream_failed') return 'stream_broken';
  return undefined;
}

/**
 * Runs one conversation actor to its end and answers the client with an error in the
 * protocol's envelope when a step failed before any byte was sent.
 */
export async function runExchange(flow: ConversationFlow, given: ExchangeInput, hooks: ExchangeHooks): Promise<void> {
  const request: ExchangeRequest = { ...given.request, requestId: given.request.requestId ?? newRequestId() };
  const input: TurnInput<EngramTurn> = { ...given, request };
  const arrivedAt = flow.now();
  // Engram's own time: until the upstream request starts, and from the end of the upstream's answer.
  const startedAt = performance.now();
  let forwardAt: number | undefined;
  let upstreamDoneAt: number | undefined;
  const actor = createActor(flow.machine, { input });
  // Told of each state the turn enters (a snapshot per transition).
  actor.subscribe((snapshot) => {
    if (upstreamDoneAt !== undefined) return;
    if (snapshot.value === 'forwarding') forwardAt ??= performance.now();
    else if (forwardAt !== undefined && snapshot.value !== 'relaying') upstreamDoneAt = performance.now();
  });
  hooks.onClientGone(() => actor.send({ type: 'CLIENT_GONE' }));
  const ended = toPromise(actor);
  actor.start();
  // A machine that throws outside its steps (a guard, an input) ends the turn as a failed step would.
  const output: ConversationOutput<EngramTurn> = await ended.catch((error: unknown) => ({ status: 'failed', error }));
  let sentStatus: number | undefined = output.forwarded?.status;
  const relayed = output.relayed;
  const answerLimit = answerLimitOf(relayed);
  const report = (error?: EngramError) => {
    const doneAt = performance.now();
    const addedMs = forwardAt === undefined ? undefined : forwardAt - startedAt + (doneAt - (upstreamDoneAt ?? doneAt));
    const body = output.resolved?.body;
    const summary: ExchangeSummary = {
      agentId: request.agentId,
      protocol: request.adapter.id,
      outcome: output.status,
      upstreamError: upstreamErrorOf(output.status, output, error),
      injected: output.injected?.injected ?? 0,
      addedMs,
    };
    // Only for a token that was accepted: an unknown agent id must not become a metric series, nor a log.
    if (output.authenticated) {
      hooks.observer?.exchangeFinished(summary);
      recordRequest(
        flow.requestLog,
        {
          id: request.requestId,
          agentId: request.agentId,
          at: arrivedAt,
          protocol: request.adapter.id,
          // Named by its answer when the turn opened it; a turn that ended before is logged by its opening.
          conversationId: output.recorded?.conversationId ?? output.resolved?.conversationId ?? output.resolved?.opening ?? null,
          status: sentStatus ?? null,
          outcome: output.status,
          latencyMs: roundMs(doneAt - startedAt),
          upstreamMs: forwardAt === undefined ? null : roundMs((upstreamDoneAt ?? doneAt) - forwardAt),
          injected: output.injected?.reflections ?? [],
          scope: output.resolved?.visible.scope ?? null,
          user: output.resolved?.visible.user ?? null,
          // What else reached the model and why nothing was added; a turn that ended before memory was asked says so.
          ...(output.injected?.memory ?? NOT_REACHED),
          answerLimit,
        },
        { log: hooks.log, failed: () => hooks.observer?.requestLogFailed?.() },
      );
    }
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
        // A stream cut mid-way says why (`stream_time_limit`, `upstream_timeout`, …); the status was 200.
        ...(!error && relayed?.outcome === 'failed' ? { error: relayed.error.code } : {}),
        ...(answerLimit ? { answerLimit } : {}),
        addedMs: addedMs === undefined ? undefined : roundMs(addedMs),
        injected: summary.injected,
        // A kept block rewritten: this turn missed the provider's prompt cache from it on.
        ...(output.injected?.memory.rebuilt ? { rebuilt: output.injected.memory.rebuilt.changes.length } : {}),
      },
      'proxied request finished',
    );
  };
  if (relayed?.outcome === 'completed' && relayed.unassembled !== undefined) {
    hooks.log.warn(
      { orgId: request.orgId, agentId: request.agentId, bytes: relayed.unassembled },
      'the upstream answer held an event over the size limit: relayed to the client whole, not learnt from',
    );
  }
  if (relayed?.outcome === 'completed' && relayed.answer.truncated) {
    const { keptBytes, bytes } = relayed.answer.truncated;
    hooks.log.warn(
      { orgId: request.orgId, agentId: request.agentId, bytes, keptBytes },
      'the upstream answer was over ENGRAM_ANSWER_MAX_BYTES: relayed to the client whole; only its first keptBytes are kept for memory',
    );
  }
  if (relayed?.outcome === 'completed' && relayed.assemblyError !== undefined) {
    hooks.log.error(
      { orgId: request.orgId, agentId: request.agentId, err: relayed.assemblyError },
      'assembling the upstream answer failed: relayed to the client whole, not learnt from',
    );
  }
  if (relayed?.outcome === 'failed' && relayed.error.code === 'stream_time_limit') {
    hooks.log.warn(
      { orgId: request.orgId, agentId: request.agentId, error: relayed.error.code },
      'the upstream answer streamed past ENGRAM_STREAM_MAX_MS: cut, the client was sent the protocol\'s error event',
    );
  }
  if (output.status !== 'failed') {
    request.sink.end();
    report();
    flow.afterAnswer(output);
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
      ...engramHeaders(output.injected?.injected ?? 0, request.requestId),
    });
    sink.write(Buffer.from(JSON.stringify(rendered.body)));
    sink.end();
  } else if (!output.relayed) {
    // Failed while relaying, for a reason the relay could not report in-stream.
    sink.fail(undefined);
  } else {
    // The answer was relayed whole; only publishing or recording it failed.
    hooks.log.error({ err: output.error }, 'settling a conversation failed');
    request.sink.end();
  }
  report(error);
}

/** The log's memory fields for a turn that ended before its inject step (a bad body, a failed lookup). */
const NOT_REACHED: InjectedMemory = { kept: [], rebuilt: null, reason: 'not_reached', bar: null, nearMisses: [] };

/** Milliseconds to a tenth, as logs and the request log show them. */
function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
