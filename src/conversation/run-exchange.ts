import { createActor, toPromise } from 'xstate';
import { toEngramError } from '../errors.js';
import type { ExchangeRequest, ExchangeResults } from './exchange.js';
import type { provideConversationMachine } from './actors.js';

type ProvidedMachine = ReturnType<typeof provideConversationMachine>;

export interface ExchangeHooks {
  /** Registers the callback run when the client goes away before the answer is complete. */
  onClientGone(callback: () => void): void;
  /** Pino-compatible (structured fields first), as Fastify's request logger is. */
  log: { error(fields: object, message: string): void; warn(fields: object, message: string): void };
}

/**
 * Runs one conversation actor to its end and answers the client with an error in the
 * protocol's envelope when a step failed before any byte was sent.
 */
export async function runExchange(machine: ProvidedMachine, request: ExchangeRequest, hooks: ExchangeHooks): Promise<void> {
  const actor = createActor(machine, { input: { request } });
  const finished = toPromise(actor);
  hooks.onClientGone(() => actor.send({ type: 'CLIENT_GONE' }));
  actor.start();
  const output = await finished;
  const results = output.results as ExchangeResults;
  const relayed = results.relay;
  if (relayed?.outcome === 'completed' && relayed.unassembled !== undefined) {
    hooks.log.warn(
      { orgId: request.orgId, agentId: request.agentId, bytes: relayed.unassembled },
      'the upstream answer held an event over the size limit: relayed to the client whole, not learnt from',
    );
  }
  if (output.status !== 'failed') {
    request.sink.end();
    return;
  }

  const error = toEngramError(output.error);
  if (error.code === 'internal') hooks.log.error({ err: output.error }, 'proxy step failed');
  const { sink, adapter } = request;
  if (!sink.headersSent) {
    const rendered = adapter.renderError(error);
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
}
