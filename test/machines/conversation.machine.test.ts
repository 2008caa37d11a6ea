/**
 * The conversation machine's flow, run by XState's actor as the proxy runs it, with step
 * implementations given through `.provide()` that only report back: which steps run, in
 * which order, with which inputs, and how each ending is reported.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import {
  conversationMachine,
  type Forwarding,
  type Injecting,
  type Publishing,
  type Recording,
  type Relaying,
  type Resolving,
  type PublishResult,
  type RecordResult,
  type StepName,
  type TurnTypes,
} from '../../machines/conversation.machine.js';

/** Each step's output names the step, so a later step's input shows whose output it got. */
interface Scripted extends TurnTypes {
  request: { id: string };
  authenticated: { by: 'authenticate' };
  resolved: { by: 'resolveConversation' };
  injected: { by: 'inject' };
}

type Outputs = Partial<{
  forward: Scripted['forwarded'] | Error;
  relay: Scripted['relayed'] | Error;
  publish: PublishResult | Error;
  record: RecordResult | Error;
  authenticate: Error;
  resolveConversation: Error;
  inject: Error;
}>;

const NAMES: StepName[] = ['authenticate', 'resolveConversation', 'inject', 'forward', 'relay', 'publish', 'record'];

/** The machine is provided once, as the app does; each run is a new actor of it. */
function run(outputs: Outputs, options: { goneDuring?: StepName; authenticated?: Scripted['authenticated'] } = {}) {
  const ran: StepName[] = [];
  const inputs: Partial<Record<StepName, unknown>> = {};
  const states: string[] = [];
  const stopped: StepName[] = [];
  let send: (event: { type: 'CLIENT_GONE' }) => void = () => undefined;
  const step =
    <I, O>(name: StepName, scripted: O | Error | undefined, made: O) =>
    async ({ input, signal }: { input: I; signal: AbortSignal }): Promise<O> => {
      ran.push(name);
      inputs[name] = input;
      if (options.goneDuring === name) {
        // Heard before the turn ends (an event sent while the actor starts is handled once it has).
        signal.addEventListener('abort', () => stopped.push(name));
        send({ type: 'CLIENT_GONE' });
      }
      if (scripted instanceof Error) throw scripted;
      return scripted ?? made;
    };
  const machine = conversationMachine<Scripted>().provide({
    actors: {
      authenticate: fromPromise(step<{ request: Scripted['request'] }, Scripted['authenticated']>('authenticate', outputs.authenticate, { by: 'authenticate' })),
      resolveConversation: fromPromise(
        step<Resolving<Scripted>, Scripted['resolved']>('resolveConversation', outputs.resolveConversation, { by: 'resolveConversation' }),
      ),
      inject: fromPromise(step<Injecting<Scripted>, Scripted['injected']>('inject', outputs.inject, { by: 'inject' })),
      forward: fromPromise(step<Forwarding<Scripted>, Scripted['forwarded']>('forward', outputs.forward, { ok: true })),
      relay: fromPromise(step<Relaying<Scripted>, Scripted['relayed']>('relay', outputs.relay, { outcome: 'completed', final: true })),
      publish: fromPromise(step<Publishing<Scripted>, PublishResult>('publish', outputs.publish, { job: 'published' })),
      record: fromPromise(step<Recording<Scripted>, RecordResult>('record', outputs.record, { state: 'recorded' })),
    },
  });
  const actor = createActor(machine, { input: { request: { id: 'turn-1' }, authenticated: options.authenticated } });
  send = (event) => actor.send(event);
  actor.subscribe((snapshot) => {
    if (states.at(-1) !== snapshot.value) states.push(String(snapshot.value));
  });
  const done = toPromise(actor);
  actor.start();
  return done.then((output) => ({ output, ran, inputs, states, stopped }));
}

test('a completed 2xx answer runs every step in order, publishes before recording, and settles', async () => {
  const { output, ran, states } = await run({});
  assert.is(output.status, 'settled');
  assert.equal(ran, NAMES);
  assert.equal(states, ['authenticating', 'resolving', 'injecting', 'forwarding', 'relaying', 'publishing', 'recording', 'settled']);
  assert.equal(output.relayed, { outcome: 'completed', final: true });
  assert.equal(output.published, { job: 'published' });
  assert.equal(output.recorded, { state: 'recorded' });
  assert.not.ok('request' in output, 'the output is what the steps made, not the request');
});

test('a lookup the transport already made is the turn\'s: no second authentication', async () => {
  const given = { by: 'authenticate' } as const;
  const { output, ran, inputs, states } = await run({}, { authenticated: given });
  assert.is(output.status, 'settled');
  assert.equal(ran, NAMES.slice(1));
  assert.is.not(states[0], 'authenticating');
  assert.is((inputs.resolveConversation as Resolving<Scripted>).authenticated, given);
  assert.is(output.authenticated, given);
});

test('each step gets the request and exactly the outputs of the steps before it', async () => {
  const { inputs } = await run({});
  const request = { id: 'turn-1' };
  const authenticated = { by: 'authenticate' };
  const resolved = { by: 'resolveConversation' };
  const injected = { by: 'inject' };
  const forwarded = { ok: true };
  const relayed = { outcome: 'completed', final: true };
  assert.equal(inputs.authenticate, { request });
  assert.equal(inputs.resolveConversation, { request, authenticated });
  assert.equal(inputs.inject, { request, authenticated, resolved });
  assert.equal(inputs.forward, { request, authenticated, resolved, injected });
  assert.equal(inputs.relay, { request, authenticated, resolved, injected, forwarded });
  assert.equal(inputs.publish, { request, authenticated, resolved, injected, relayed });
  assert.equal(inputs.record, { request, authenticated, resolved, injected, relayed, published: { job: 'published' } });
});

test('a completed answer that is not final (a tool call) is recorded without being published', async () => {
  const { output, ran, states, inputs } = await run({ relay: { outcome: 'completed', final: false } });
  assert.is(output.status, 'settled');
  assert.equal(ran, NAMES.filter((name) => name !== 'publish'));
  assert.equal(states.slice(-3), ['relaying', 'recording', 'settled']);
  assert.is(output.published, undefined);
  assert.not.ok('published' in (inputs.record as object), 'the record step settles it itself');
});

test('a publish the bus refused (deferred) still records the turn, which settles', async () => {
  const { output, ran } = await run({ publish: { job: 'deferred' }, record: { state: 'deferred' } });
  assert.is(output.status, 'settled');
  assert.equal(ran, NAMES);
  assert.equal(output.published, { job: 'deferred' });
  assert.equal(output.recorded, { state: 'deferred' });
});

test('publishing or recording failing outright (not a refusal) ends the turn failed with its error, after the answer', async () => {
  const broken = new Error('building the job failed');
  const publishing = await run({ publish: broken });
  assert.is(publishing.output.status, 'failed');
  assert.is(publishing.output.error, broken);
  assert.not.ok(publishing.ran.includes('record'), 'nothing is recorded ahead of a job that was not published');
  assert.ok(publishing.output.relayed, 'the answer was relayed');

  const recording = await run({ record: broken });
  assert.is(recording.output.status, 'failed');
  assert.is(recording.output.error, broken);
  assert.equal(recording.output.published, { job: 'published' });
});

test('an upstream error is relayed and nothing is published or recorded', async () => {
  const { output, ran } = await run({ forward: { ok: false }, relay: { outcome: 'completed', final: false } });
  assert.is(output.status, 'upstream_error');
  assert.equal(ran.slice(-1), ['relay']);
  assert.equal(output.relayed, { outcome: 'completed', final: false });
});

test('a stream that broke off ends interrupted, without settling', async () => {
  const { output, ran } = await run({ relay: { outcome: 'failed', final: false } });
  assert.is(output.status, 'interrupted');
  assert.equal(ran.slice(-1), ['relay']);
});

test('a failing step ends the flow with its error', async () => {
  const failure = new Error('no such token');
  const { output, ran } = await run({ authenticate: failure });
  assert.is(output.status, 'failed');
  assert.is(output.error, failure);
  assert.equal(ran, ['authenticate']);
  assert.is(output.authenticated, undefined);
});

test('every path, through the real actor: the states entered, the steps run, the output', async () => {
  const path = (...states: string[]) => ['authenticating', 'resolving', 'injecting', 'forwarding', 'relaying', ...states];
  const ok = { forward: { ok: true }, relay: { outcome: 'completed', final: true } } as const;
  const cases: Array<[string, Outputs, { goneDuring?: StepName }, string, string[]]> = [];
  for (const ok2xx of [true, false]) {
    for (const outcome of ['completed', 'failed', 'aborted'] as const) {
      for (const final of [true, false]) {
        const status = outcome === 'aborted' ? 'aborted' : !ok2xx ? 'upstream_error' : outcome === 'completed' ? 'settled' : 'interrupted';
        const settled = final ? ['publishing', 'recording', 'settled'] : ['recording', 'settled'];
        const end = { aborted: ['aborted'], upstream_error: ['upstreamError'], settled, interrupted: ['interrupted'] }[status]!;
        cases.push([`forward ok ${ok2xx}, relay ${outcome}, final ${final}`, { forward: { ok: ok2xx }, relay: { outcome, final } }, {}, status, path(...end)]);
      }
    }
  }
  const order = ['authenticating', 'resolving', 'injecting', 'forwarding', 'relaying', 'publishing', 'recording'];
  NAMES.forEach((name, at) => {
    cases.push([`${name} fails`, { ...ok, [name]: new Error(`${name} failed`) }, {}, 'failed', [...order.slice(0, at + 1), 'failed']]);
    cases.push([`client gone during ${name}`, ok, { goneDuring: name }, 'aborted', [...order.slice(0, at + 1), 'aborted']]);
  });
  for (const [label, outputs, options, status, states] of cases) {
    const result = await run(outputs, options);
    assert.is(result.output.status, status, label);
    assert.equal(result.states, states, `states, ${label}`);
    assert.equal(result.ran, NAMES.filter((_, at) => states.includes(order[at])), `steps, ${label}`);
    if (options.goneDuring) {
      assert.equal(result.stopped, [options.goneDuring], `the running step is told to stop, ${label}`);
      const after = NAMES.slice(NAMES.indexOf(options.goneDuring) + 1);
      assert.ok(after.every((name) => !result.ran.includes(name)), `nothing runs after the client left, ${label}`);
    }
    if (status === 'failed') assert.instance(result.output.error, Error, label);
  }
});

test('a step left unprovided fails the turn, naming it', async () => {
  const actor = createActor(conversationMachine<Scripted>(), { input: { request: { id: 'turn-1' } } });
  const done = toPromise(actor);
  actor.start();
  const output = await done;
  assert.is(output.status, 'failed');
  assert.match(String(output.error), /actor "authenticate" was not provided/);
});

test.run();
