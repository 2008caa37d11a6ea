/**
 * One proxied turn of a conversation (DESIGN section 2):
 * authenticate → resolve conversation → inject → forward upstream → relay → settle.
 *
 * The machine only describes the flow. Each step is a named promise actor whose
 * implementation arrives through `.provide()` (src/conversation/actors.ts); each gets the
 * request and the results of the steps before it, and honours its AbortSignal, which
 * fires when the client goes away (the `CLIENT_GONE` event) or the machine stops.
 */
import { assign, fromPromise, setup } from 'xstate';

export type StepName = 'authenticate' | 'resolveConversation' | 'inject' | 'forward' | 'relay' | 'settle';

/** What every step receives: the request, and the outputs of the steps already done. */
export interface StepInput {
  request: unknown;
  results: Partial<Record<StepName, unknown>>;
}

/** The part of `forward`'s output the machine reads. */
export interface ForwardResult {
  /** The upstream answered 2xx: its answer is relayed and may be learnt from. */
  ok: boolean;
}

/** The part of `relay`'s output the machine reads. */
export interface RelayResult {
  outcome: 'completed' | 'failed' | 'aborted';
  /** A successful final answer, worth extracting once the conversation settles. */
  final: boolean;
}

export interface ConversationOutput {
  status: 'settled' | 'upstream_error' | 'interrupted' | 'failed' | 'aborted';
  results: Partial<Record<StepName, unknown>>;
  error?: unknown;
}

interface Context {
  request: unknown;
  results: Partial<Record<StepName, unknown>>;
  error?: unknown;
  status: ConversationOutput['status'];
}

const notProvided = (name: StepName) =>
  fromPromise<unknown, StepInput>(async () => {
    throw new Error(`conversation machine: actor "${name}" was not provided`);
  });

const stepInput = ({ context }: { context: Context }): StepInput => ({ request: context.request, results: context.results });

const relayOf = (event: unknown) => (event as { output?: RelayResult }).output;

export const conversationMachine = setup({
  types: {
    context: {} as Context,
    input: {} as { request: unknown },
    events: {} as { type: 'CLIENT_GONE' },
    output: {} as ConversationOutput,
  },
  actors: {
    authenticate: notProvided('authenticate'),
    resolveConversation: notProvided('resolveConversation'),
    inject: notProvided('inject'),
    forward: notProvided('forward'),
    relay: notProvided('relay'),
    settle: notProvided('settle'),
  },
  guards: {
    upstreamFailed: ({ context }) => (context.results.forward as ForwardResult | undefined)?.ok !== true,
    relayAborted: ({ event }) => relayOf(event)?.outcome === 'aborted',
    relayCompleted: ({ event }) => relayOf(event)?.outcome === 'completed',
  },
  actions: {
    keepRelay: assign({ results: ({ context, event }) => ({ ...context.results, relay: relayOf(event) }) }),
    keepError: assign({ error: ({ event }) => (event as { error?: unknown }).error }),
  },
}).createMachine({
  id: 'conversation',
  context: ({ input }) => ({ request: input.request, results: {}, status: 'failed' as const }),
  initial: 'authenticating',
  on: { CLIENT_GONE: '.aborted' },
  states: {
    authenticating: {
      invoke: {
        src: 'authenticate',
        input: stepInput,
        onDone: { target: 'resolving', actions: assign({ results: ({ context, event }) => ({ ...context.results, authenticate: event.output }) }) },
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    resolving: {
      invoke: {
        src: 'resolveConversation',
        input: stepInput,
        onDone: { target: 'injecting', actions: assign({ results: ({ context, event }) => ({ ...context.results, resolveConversation: event.output }) }) },
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    /** Retrieval and prompt-cache-safe placement of reflections. */
    injecting: {
      invoke: {
        src: 'inject',
        input: stepInput,
        onDone: { target: 'forwarding', actions: assign({ results: ({ context, event }) => ({ ...context.results, inject: event.output }) }) },
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    forwarding: {
      invoke: {
        src: 'forward',
        input: stepInput,
        onDone: { target: 'relaying', actions: assign({ results: ({ context, event }) => ({ ...context.results, forward: event.output }) }) },
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    relaying: {
      invoke: {
        src: 'relay',
        input: stepInput,
        onDone: [
          { guard: 'relayAborted', target: 'aborted' },
          { guard: 'upstreamFailed', target: 'upstreamError', actions: 'keepRelay' },
          { guard: 'relayCompleted', target: 'settling', actions: 'keepRelay' },
          { target: 'interrupted', actions: 'keepRelay' },
        ],
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    /** Records the turn (its blocks, the watermark) and queues a final answer for extraction. */
    settling: {
      invoke: {
        src: 'settle',
        input: stepInput,
        onDone: { target: 'settled' },
        onError: { target: 'failed', actions: 'keepError' },
      },
    },
    settled: { type: 'final', entry: assign({ status: 'settled' as const }) },
    /** The upstream answered with an error, passed through unchanged; nothing to learn or keep. */
    upstreamError: { type: 'final', entry: assign({ status: 'upstream_error' as const }) },
    /** The upstream stream broke off; the client was told in-stream. Nothing to learn. */
    interrupted: { type: 'final', entry: assign({ status: 'interrupted' as const }) },
    failed: { type: 'final', entry: assign({ status: 'failed' as const }) },
    aborted: { type: 'final', entry: assign({ status: 'aborted' as const }) },
  },
  // The status is recorded on entering each final state: while `output` runs, the
  // snapshot does not show the final state yet.
  output: ({ context }) => ({ status: context.status, results: context.results, error: context.error }),
});
