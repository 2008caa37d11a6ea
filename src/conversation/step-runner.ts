/**
 * Runs a machine of promise steps as XState would, without creating actors.
 *
 * The conversation machine stays the description of a proxied turn; XState's actor
 * costs about 0.17 ms a run here (an actor, a system, six child actors, a snapshot per
 * transition), a tenth of a request's whole CPU time. The machine's shape is read once
 * from its state nodes (each state invokes one promise step; its done and error
 * transitions pick a target by guard and run `assign` actions; final states assign on
 * entry; root events move to a final state), then each run only calls the steps and
 * follows the transitions. Anything else in a machine is refused when it is compiled,
 * never met halfway through a request. The machine tests run every scenario through
 * both this and XState's `createActor` and expect the same steps and the same output.
 */
import type { AnyStateMachine } from 'xstate';

/** A step's implementation: its input (from the state's `invoke.input`) and the signal that stops it. */
export type StepFunction = (input: unknown, signal: AbortSignal) => Promise<unknown>;

export interface StepRun<Output> {
  /** Settles with the machine's output once it reaches a final state. */
  readonly done: Promise<Output>;
  /** An event handled at the machine's root (the conversation machine's `CLIENT_GONE`). */
  send(event: { type: string }): void;
}

export interface StepRunOptions {
  /** Told the name of each state entered, in order (the first one included). */
  onState?(state: string): void;
}

interface MachineEvent {
  type: string;
  output?: unknown;
  error?: unknown;
}

type Context = Record<string, unknown>;
type Apply = (context: Context, event: MachineEvent | undefined) => Context;
type Guard = (context: Context, event: MachineEvent) => boolean;

interface Transition {
  guard: Guard | undefined;
  apply: Apply;
  target: string;
}

interface CompiledState {
  name: string;
  final: boolean;
  /** Entry actions (final states). */
  entry: Apply;
  step?: { src: string; input: (context: Context, event: MachineEvent | undefined) => unknown; done: Transition[]; error: Transition[] };
}

/** The parts of XState's state nodes the runner reads (public fields of `StateNode`). */
interface NodeView {
  key: string;
  type: string;
  entry: unknown[];
  invoke: Array<{ id: string; src: unknown; input: unknown }>;
  transitions: Map<string, Array<{ target?: Array<{ key: string }>; guard?: unknown; actions: unknown[] }>>;
  states: Record<string, NodeView>;
  config: { initial?: unknown };
}

class UnsupportedMachineError extends Error {
  override name = 'UnsupportedMachineError';
}

/**
 * Compiles `machine` for `steps` (one function per invoked `src`); throws when the
 * machine uses something the runner does not run.
 */
export function compileStepMachine<Output>(
  machine: AnyStateMachine,
  steps: Readonly<Record<string, StepFunction>>,
): (input: unknown, options?: StepRunOptions) => StepRun<Output> {
  const implementations = machine.implementations as { actions: Record<string, unknown>; guards: Record<string, unknown> };
  const config = machine.config as { context?: unknown; output?: unknown };
  const root = machine.root as unknown as NodeView;

  const action = (item: unknown): Apply => {
    const resolved = typeof item === 'string' ? implementations.actions[item] : item;
    const assigned = resolved as { type?: string; assignment?: unknown } | undefined;
    if (assigned?.type !== 'xstate.assign' || assigned.assignment === undefined) {
      throw new UnsupportedMachineError(`step runner: only assign actions are run, not ${typeof item === 'string' ? item : assigned?.type}`);
    }
    const assignment = assigned.assignment;
    return (context, event) => {
      const args = { context, event };
      if (typeof assignment === 'function') return { ...context, ...(assignment as (a: typeof args) => Context)(args) };
      const next = { ...context };
      for (const [key, value] of Object.entries(assignment as Record<string, unknown>)) {
        next[key] = typeof value === 'function' ? (value as (a: typeof args) => unknown)(args) : value;
      }
      return next;
    };
  };
  const actions = (items: readonly unknown[]): Apply => {
    const each = items.map(action);
    return (context, event) => each.reduce((current, apply) => apply(current, event), context);
  };
  const guard = (item: unknown): Guard | undefined => {
    if (item === undefined) return undefined;
    const named = typeof item === 'string' ? item : (item as { type?: unknown }).type;
    const implementation = typeof item === 'function' ? item : typeof named === 'string' ? implementations.guards[named] : undefined;
    if (typeof implementation !== 'function') throw new UnsupportedMachineError(`step runner: guard ${String(named)} is not a function`);
    const params = typeof item === 'object' ? (item as { params?: unknown }).params : undefined;
    return (context, event) => Boolean((implementation as (a: unknown, p: unknown) => unknown)({ context, event }, params));
  };
  const transitions = (node: NodeView, type: string): Transition[] =>
    (node.transitions.get(type) ?? []).map((t) => {
      if (t.target?.length !== 1) throw new UnsupportedMachineError(`step runner: ${node.key} has a transition on ${type} without one target`);
      return { guard: guard(t.guard), apply: actions(t.actions), target: t.target[0].key };
    });

  const states = new Map<string, CompiledState>();
  for (const node of Object.values(root.states)) {
    if (Object.keys(node.states).length > 0) throw new UnsupportedMachineError(`step runner: ${node.key} has child states`);
    if (node.type === 'final') {
      states.set(node.key, { name: node.key, final: true, entry: actions(node.entry) });
      continue;
    }
    const [invoke, ...more] = node.invoke;
    if (!invoke || more.length > 0 || typeof invoke.src !== 'string' || node.entry.length > 0) {
      throw new UnsupportedMachineError(`step runner: ${node.key} must invoke exactly one step and have no entry actions`);
    }
    const step = steps[invoke.src];
    if (!step) throw new UnsupportedMachineError(`step runner: no step "${invoke.src}"`);
    const input = invoke.input;
    states.set(node.key, {
      name: node.key,
      final: false,
      entry: actions([]),
      step: {
        src: invoke.src,
        input: typeof input === 'function' ? (context, event) => input({ context, event }) : () => input,
        done: transitions(node, `xstate.done.actor.${invoke.id}`),
        error: transitions(node, `xstate.error.actor.${invoke.id}`),
      },
    });
  }
  const rootEvents = new Map([...root.transitions.keys()].map((type) => [type, transitions(root, type)]));
  for (const [type, candidates] of rootEvents) {
    // The run's one signal is spent once a root event stops a step: nothing may run after it.
    if (candidates.some((t) => !states.get(t.target)?.final)) throw new UnsupportedMachineError(`step runner: ${type} must lead to a final state`);
  }
  const initial = root.config.initial;
  if (typeof initial !== 'string' || !states.has(initial)) throw new UnsupportedMachineError('step runner: the machine needs an initial state among its own');
  const makeContext = config.context;
  const makeOutput = config.output as ((args: { context: Context; event: unknown }) => Output) | undefined;

  return (input, options = {}) => {
    let context: Context =
      typeof makeContext === 'function' ? (makeContext as (a: { input: unknown }) => Context)({ input }) : { ...(makeContext as Context) };
    let current: CompiledState = states.get(initial)!;
    // One signal for the run: a step that is running when a root event moves the machine
    // is stopped through it; steps that ended no longer listen.
    const controller = new AbortController();
    /** Bumped on every move, so a step that ends after the machine moved on is ignored. */
    let generation = 0;
    let finish!: (output: Output) => void;
    let fail!: (error: unknown) => void;
    const done = new Promise<Output>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });

    const pick = (candidates: readonly Transition[], event: MachineEvent): Transition | undefined =>
      candidates.find((t) => t.guard === undefined || t.guard(context, event));

    const enter = (name: string, event: MachineEvent | undefined): void => {
      generation++;
      current = states.get(name)!;
      options.onState?.(name);
      if (current.final) {
        context = current.entry(context, event);
        finish(makeOutput ? makeOutput({ context, event }) : (undefined as Output));
        return;
      }
      const { src, done: onDone, error: onError } = current.step!;
      const at = generation;
      let running: Promise<unknown>;
      try {
        running = steps[src](current.step!.input(context, event), controller.signal);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (output) => settle(at, onDone, { type: `done:${src}`, output }),
        (error: unknown) => settle(at, onError, { type: `error:${src}`, error }),
      );
    };

    const settle = (at: number, candidates: readonly Transition[], event: MachineEvent): void => {
      if (at !== generation) return;
      try {
        const chosen = pick(candidates, event);
        if (!chosen) throw event.error ?? new UnsupportedMachineError(`step runner: no transition out of ${current.name}`);
        context = chosen.apply(context, event);
        enter(chosen.target, event);
      } catch (error) {
        generation++;
        fail(error);
      }
    };

    // The first step starts once the caller holds `send` (as an actor is created, then started).
    queueMicrotask(() => {
      if (generation > 0) return;
      try {
        enter(initial, undefined);
      } catch (error) {
        fail(error);
      }
    });
    return {
      done,
      send(event) {
        if (current.final) return;
        const chosen = pick(rootEvents.get(event.type) ?? [], event);
        if (!chosen) return;
        // The running step is stopped, as XState stops an invoked actor on leaving its state.
        controller.abort();
        context = chosen.apply(context, event);
        enter(chosen.target, event);
      },
    };
  };
}
