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
  status: 'settled' | 'completed' | 'upstream_error' | 'interrupted' | 'failed' | 'aborted';
  results: Partial<Record<StepName, unknown>>;
  error?: unknown;
}

interface Context {
  request: unknown;
  results: Partial<Record<StepName, unknown>>;
  error?: unknown;
}

const notProvided = (name: StepName) =>
  fromPromise<unknown, StepInput>(async () => {
    throw new Error(`conversation machine: actor "${name}" was not provided`);
  });

const stepInput = ({ context }: { context: Context }): StepInput => ({ request: context.request, results: context.results });

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
    upstreamOk: ({ context }) => (context.results.forward as ForwardResult | undefined)?.ok === true,
    finalAnswer: ({ context }) => {
      const relay = context.results.relay as RelayResult | undefined;
      return relay?.outcome === 'completed' && relay.final;
    },
    relayCompleted: ({ context }) => (context.results.relay as RelayResult | undefined)?.outcome === 'completed',
    relayAborted: ({ context }) => (context.results.relay as RelayResult | undefined)?.outcome === 'aborted',
  },
}).createMachine({
  id: 'conversation',
  context: ({ input }) => ({ request: input.request, results: {} }),
  initial: 'authenticating',
  on: { CLIENT_GONE: '.aborted' },
  states: {
    authenticating: {
      invoke: {
        src: 'authenticate',
        input: stepInput,
        onDone: { target: 'resolving', actions: assign({ results: ({ context, event }) => ({ ...context.results, authenticate: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    resolving: {
      invoke: {
        src: 'resolveConversation',
        input: stepInput,
        onDone: { target: 'injecting', actions: assign({ results: ({ context, event }) => ({ ...context.results, resolveConversation: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    injecting: {
      invoke: {
        src: 'inject',
        input: stepInput,
        onDone: { target: 'forwarding', actions: assign({ results: ({ context, event }) => ({ ...context.results, inject: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    forwarding: {
      invoke: {
        src: 'forward',
        input: stepInput,
        onDone: { target: 'relaying', actions: assign({ results: ({ context, event }) => ({ ...context.results, forward: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    relaying: {
      invoke: {
        src: 'relay',
        input: stepInput,
        onDone: { target: 'relayed', actions: assign({ results: ({ context, event }) => ({ ...context.results, relay: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    relayed: {
      always: [
        { guard: 'relayAborted', target: 'aborted' },
        { guard: 'upstreamOk', target: 'judging' },
        { target: 'upstreamError' },
      ],
    },
    judging: {
      always: [
        { guard: 'finalAnswer', target: 'settling' },
        { guard: 'relayCompleted', target: 'completed' },
        { target: 'interrupted' },
      ],
    },
    settling: {
      invoke: {
        src: 'settle',
        input: stepInput,
        onDone: { target: 'settled', actions: assign({ results: ({ context, event }) => ({ ...context.results, settle: event.output }) }) },
        onError: { target: 'failed', actions: assign({ error: ({ event }) => event.error }) },
      },
    },
    settled: { type: 'final' },
    completed: { type: 'final' },
    /** The upstream answered with an error, passed through unchanged; nothing to learn. */
    upstreamError: { type: 'final' },
    /** The upstream stream broke off; the client was told in-stream. Nothing to learn. */
    interrupted: { type: 'final' },
    failed: { type: 'final' },
    aborted: { type: 'final' },
  },
  output: ({ context, self }) => {
    const value = self.getSnapshot().value;
    const status: ConversationOutput['status'] =
      value === 'settled' ? 'settled'
      : value === 'completed' ? 'completed'
      : value === 'upstreamError' ? 'upstream_error'
      : value === 'aborted' ? 'aborted'
      : value === 'interrupted' ? 'interrupted'
      : 'failed';
    return { status, results: context.results, error: context.error };
  },
});
