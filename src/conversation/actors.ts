/**
 * The conversation machine given Engram's steps (one file each in `steps/`), with Engram's
 * ports, once per app (`.provide()`); each turn runs as an actor of it (`run-exchange.ts`).
 */
import { fromPromise } from 'xstate';
import { conversationMachine, type ConversationOutput, type Forwarding, type Injecting, type Publishing, type Recording, type Relaying, type Resolving } from '../../machines/conversation.machine.js';
import { redactJob } from '../memory/extraction.js';
import type { ConversationActorDeps, EngramTurn, ExchangeRequest } from './exchange.js';
import { authenticate } from './steps/authenticate.js';
import { resolveConversation } from './steps/resolve-conversation.js';
import { inject } from './steps/inject.js';
import { forward } from './steps/forward.js';
import { relay } from './steps/relay.js';
import { publish } from './steps/publish.js';
import { record } from './steps/record.js';

/** The conversation machine with Engram's types: placeholder steps until `provideConversationMachine`. */
export const engramConversationMachine = conversationMachine<EngramTurn>();

export function provideConversationMachine(deps: ConversationActorDeps) {
  return {
    /** The machine with Engram's steps: `createActor` it once per turn (`runExchange`). */
    machine: engramConversationMachine.provide({
      actors: {
        authenticate: fromPromise(({ input }: { input: { request: ExchangeRequest } }) => authenticate(deps, input)),
        resolveConversation: fromPromise(({ input }: { input: Resolving<EngramTurn> }) => resolveConversation(deps, input)),
        inject: fromPromise(({ input, signal }: { input: Injecting<EngramTurn>; signal: AbortSignal }) => inject(deps, input, signal)),
        forward: fromPromise(({ input, signal }: { input: Forwarding<EngramTurn>; signal: AbortSignal }) => forward(deps, input, signal)),
        relay: fromPromise(({ input, signal }: { input: Relaying<EngramTurn>; signal: AbortSignal }) => relay(deps, input, signal)),
        publish: fromPromise(({ input }: { input: Publishing<EngramTurn> }) => publish(deps, input)),
        record: fromPromise(({ input }: { input: Recording<EngramTurn> }) => record(deps, input)),
      },
    }),
    /** Where `runExchange` records each turn once it ended (DESIGN section 12). */
    requestLog: deps.control.requests,
    now: deps.now,
    /**
     * Once the client has its whole answer: the turns the turn published unredacted are
     * cleaned in the background, so the conversation's next job carries them cleaned (the
     * worker would clean them anyway; this spares re-sealing them raw every turn).
     */
    afterAnswer(output: ConversationOutput<EngramTurn>): void {
      const job = output.published?.settlement.job;
      if (!job) return;
      setImmediate(() => {
        try {
          redactJob(job, deps.cleanedTurns);
        } catch {
          // The worker cleans the job itself.
        }
      });
    },
  };
}

/** The conversation machine given Engram's steps. */
export type ConversationFlow = ReturnType<typeof provideConversationMachine>;
