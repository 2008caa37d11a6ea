/**
 * One proxied turn of a conversation (DESIGN section 2): authenticate (unless the
 * transport did) → resolve conversation → inject → forward upstream → relay → publish it
 * for extraction → record the turn.
 *
 * The machine only describes the flow; XState runs it, one actor per turn. Each step is
 * a named promise actor, declared here as a typed placeholder whose implementation
 * arrives through `.provide()` (src/conversation/actors.ts). The types of what each step
 * makes come from the implementation (`TurnTypes`), since machines import nothing of the
 * conversation layer; each step gets exactly the outputs of the steps before it, typed,
 * and honours its AbortSignal, which fires when the client goes away (`CLIENT_GONE`) or
 * the actor stops.
 */
import { assign, fromPromise, setup } from 'xstate';

/** What the machine itself reads of `forward`'s output. */
export interface ForwardResult {
  /** The upstream answered 2xx: its answer is relayed and may be learnt from. */
  ok: boolean;
}

/** What the machine itself reads of `relay`'s output. */
export interface RelayResult {
  outcome: 'completed' | 'failed' | 'aborted';
  /** A successful final answer, worth extracting. */
  final: boolean;
}

/**
 * What the two settling steps report. A write the store refused is not a failed turn (the
 * client has its answer): it is `deferred` to the retry queue, behind what was deferred
 * before it, or `lost` when the queue could not keep it (full, or stopping).
 */
export interface PublishResult {
  job: 'published' | 'deferred' | 'lost' | 'none';
}
export interface RecordResult {
  state: 'recorded' | 'deferred' | 'lost';
}

/** The types of one turn's request and of each step's output, given by the implementation. */
export interface TurnTypes {
  request: unknown;
  authenticated: unknown;
  resolved: unknown;
  injected: unknown;
  forwarded: ForwardResult;
  relayed: RelayResult;
  published: PublishResult;
  recorded: RecordResult;
}

/** What a turn starts from: the request, and the token lookup when the transport already made it. */
export interface TurnInput<T extends TurnTypes> {
  request: T['request'];
  authenticated?: T['authenticated'];
}

/** Each step's input: the request and the outputs of the steps it follows. */
export interface Resolving<T extends TurnTypes> {
  request: T['request'];
  authenticated: T['authenticated'];
}
export interface Injecting<T extends TurnTypes> extends Resolving<T> {
  resolved: T['resolved'];
}
export interface Forwarding<T extends TurnTypes> extends Injecting<T> {
  injected: T['injected'];
}
export interface Relaying<T extends TurnTypes> extends Forwarding<T> {
  forwarded: T['forwarded'];
}
/** A completed 2xx answer, relayed whole: what publishing it for extraction reads. */
export interface Publishing<T extends TurnTypes> extends Forwarding<T> {
  relayed: T['relayed'];
}
/** A completed 2xx answer to record; `published` when it was final and so published first. */
export interface Recording<T extends TurnTypes> extends Publishing<T> {
  published?: T['published'];
}

export type ConversationStatus = 'settled' | 'upstream_error' | 'interrupted' | 'failed' | 'aborted';

/** The actor's context: each step's output once it ran. */
export interface TurnContext<T extends TurnTypes> {
  request: T['request'];
  authenticated?: T['authenticated'];
  resolved?: T['resolved'];
  injected?: T['injected'];
  forwarded?: T['forwarded'];
  relayed?: T['relayed'];
  published?: T['published'];
  recorded?: T['recorded'];
  error?: unknown;
  status: ConversationStatus;
}

/** How the turn ended, with what each step that ran made. */
export type ConversationOutput<T extends TurnTypes> = Omit<TurnContext<T>, 'request'>;

export type StepName = 'authenticate' | 'resolveConversation' | 'inject' | 'forward' | 'relay' | 'publish' | 'record';

const notProvided = (name: StepName) => async (): Promise<never> => {
  throw new Error(`conversation machine: actor "${name}" was not provided`);
};

/**
 * A step's output its state needs. The states run in the chart's order, so only a machine
 * edited to skip a step gets here, and it is told which.
 */
function known<V>(value: V | undefined, step: StepName): V {
  if (value === undefined) throw new Error(`conversation machine: a state needs the output of "${step}", which did not run`);
  return value;
}

const resolving = <T extends TurnTypes>(context: TurnContext<T>): Resolving<T> => ({
  request: context.request,
  authenticated: known(context.authenticated, 'authenticate'),
});
const injecting = <T extends TurnTypes>(context: TurnContext<T>): Injecting<T> => ({
  ...resolving(context),
  resolved: known(context.resolved, 'resolveConversation'),
});
const forwarding = <T extends TurnTypes>(context: TurnContext<T>): Forwarding<T> => ({
  ...injecting(context),
  injected: known(context.injected, 'inject'),
});
const relaying = <T extends TurnTypes>(context: TurnContext<T>): Relaying<T> => ({
  ...forwarding(context),
  forwarded: known(context.forwarded, 'forward'),
});
const publishing = <T extends TurnTypes>(context: TurnContext<T>): Publishing<T> => ({
  ...forwarding(context),
  relayed: known(context.relayed, 'relay'),
});
const recording = <T extends TurnTypes>(context: TurnContext<T>): Recording<T> => ({
  ...publishing(context),
  ...(context.published === undefined ? {} : { published: context.published }),
});

/**
 * The conversation machine for a turn of types `T`, with placeholder steps: give it its
 * steps once with `.provide({ actors })`, then `createActor` it per turn.
 */
export function conversationMachine<T extends TurnTypes>() {
  return setup({
    types: {
      context: {} as TurnContext<T>,
      input: {} as TurnInput<T>,
      events: {} as { type: 'CLIENT_GONE' },
      output: {} as ConversationOutput<T>,
    },
    actors: {
      authenticate: fromPromise<T['authenticated'], { request: T['request'] }>(notProvided('authenticate')),
      resolveConversation: fromPromise<T['resolved'], Resolving<T>>(notProvided('resolveConversation')),
      inject: fromPromise<T['injected'], Injecting<T>>(notProvided('inject')),
      forward: fromPromise<T['forwarded'], Forwarding<T>>(notProvided('forward')),
      relay: fromPromise<T['relayed'], Relaying<T>>(notProvided('relay')),
      publish: fromPromise<T['published'], Publishing<T>>(notProvided('publish')),
      record: fromPromise<T['recorded'], Recording<T>>(notProvided('record')),
    },
    actions: {
      keepError: assign({ error: (_, params: { error: unknown }) => params.error }),
    },
  }).createMachine({
    id: 'conversation',
    context: ({ input }) => ({ request: input.request, authenticated: input.authenticated, status: 'failed' }),
    initial: 'starting',
    on: { CLIENT_GONE: '.aborted' },
    states: {
      /**
       * A transport that checked the token before it read the body (the HTTP routes) gives
       * its lookup as input, and the turn goes on with it: one lookup per turn.
       */
      starting: {
        always: [{ guard: ({ context }) => context.authenticated !== undefined, target: 'resolving' }, { target: 'authenticating' }],
      },
      authenticating: {
        invoke: {
          src: 'authenticate',
          input: ({ context }) => ({ request: context.request }),
          onDone: { target: 'resolving', actions: assign({ authenticated: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      resolving: {
        invoke: {
          src: 'resolveConversation',
          input: ({ context }) => resolving(context),
          onDone: { target: 'injecting', actions: assign({ resolved: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      /** Retrieval and prompt-cache-safe placement of reflections. */
      injecting: {
        invoke: {
          src: 'inject',
          input: ({ context }) => injecting(context),
          onDone: { target: 'forwarding', actions: assign({ injected: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      forwarding: {
        invoke: {
          src: 'forward',
          input: ({ context }) => forwarding(context),
          onDone: { target: 'relaying', actions: assign({ forwarded: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      relaying: {
        invoke: {
          src: 'relay',
          input: ({ context }) => relaying(context),
          onDone: [
            { guard: ({ event }) => event.output.outcome === 'aborted', target: 'aborted' },
            {
              guard: ({ context }) => context.forwarded?.ok !== true,
              target: 'upstreamError',
              actions: assign({ relayed: ({ event }) => event.output }),
            },
            {
              guard: ({ event }) => event.output.outcome === 'completed' && event.output.final,
              target: 'publishing',
              actions: assign({ relayed: ({ event }) => event.output }),
            },
            // A tool call, or an answer the upstream marked errored: recorded, nothing to learn from yet.
            {
              guard: ({ event }) => event.output.outcome === 'completed',
              target: 'recording',
              actions: assign({ relayed: ({ event }) => event.output }),
            },
            { target: 'interrupted', actions: assign({ relayed: ({ event }) => event.output }) },
          ],
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      /**
       * A final answer's new turns queued for extraction, before the state write that
       * marks an older waiting job superseded (`src/memory/watermark.ts`): a crash in
       * between leaves a job that still runs. A publish the bus refused is deferred to the
       * retry queue, and the state write then waits behind it there; recording follows
       * either way.
       */
      publishing: {
        invoke: {
          src: 'publish',
          input: ({ context }) => publishing(context),
          onDone: { target: 'recording', actions: assign({ published: ({ event }) => event.output }) },
          // Only a fault of Engram's own (the store's refusals are deferred): the answer is
          // already with the client, so the turn ends `failed` and is logged, unrecorded.
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      /**
       * The turn recorded: the conversation's state written against the revision the
       * request read (its blocks, the watermark), its Responses record and session mark.
       * A write the store refused is deferred to the retry queue: the turn still settles.
       */
      recording: {
        invoke: {
          src: 'record',
          input: ({ context }) => recording(context),
          onDone: { target: 'settled', actions: assign({ recorded: ({ event }) => event.output }) },
          onError: { target: 'failed', actions: { type: 'keepError', params: ({ event }) => ({ error: event.error }) } },
        },
      },
      settled: { type: 'final', entry: assign({ status: 'settled' }) },
      /** The upstream answered with an error, passed through unchanged; nothing to learn or keep. */
      upstreamError: { type: 'final', entry: assign({ status: 'upstream_error' }) },
      /** The upstream stream broke off; the client was told in-stream. Nothing to learn. */
      interrupted: { type: 'final', entry: assign({ status: 'interrupted' }) },
      failed: { type: 'final', entry: assign({ status: 'failed' }) },
      aborted: { type: 'final', entry: assign({ status: 'aborted' }) },
    },
    // The status is recorded on entering each final state: while `output` runs, the
    // snapshot does not show the final state yet.
    output: ({ context: { request: _request, ...output } }) => output,
  });
}
