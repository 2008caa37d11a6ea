/**
 * The conversation machine's flow, with step implementations that only report back:
 * which steps run, in which order, and how each ending is reported.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import { conversationMachine, type ConversationOutput, type StepInput, type StepName } from '../../machines/conversation.machine.js';
import { compileStepMachine, type StepFunction } from '../../src/conversation/step-runner.js';

type Runner = 'xstate' | 'step runner';

/**
 * One flow through the machine with steps that report back, run either by XState's
 * actor or by Engram's step runner (which the proxy uses): both must behave alike.
 */
function run(runner: Runner, outputs: Partial<Record<StepName, unknown | Error>>, options: { goneDuring?: StepName } = {}) {
  const ran: StepName[] = [];
  const states: string[] = [];
  let send: (event: { type: 'CLIENT_GONE' }) => void = () => undefined;
  const implementation = (name: StepName) => async (_input: unknown, signal: AbortSignal) => {
    ran.push(name);
    if (options.goneDuring === name) {
      send({ type: 'CLIENT_GONE' });
      assert.ok(signal.aborted, 'the running step is told to stop');
    }
    const output = outputs[name];
    if (output instanceof Error) throw output;
    return output ?? {};
  };
  const names: StepName[] = ['authenticate', 'resolveConversation', 'inject', 'forward', 'relay', 'settle'];
  const steps = Object.fromEntries(names.map((name) => [name, implementation(name)])) as Record<StepName, StepFunction>;
  if (runner === 'step runner') {
    const started = compileStepMachine<ConversationOutput>(conversationMachine, steps)({ request: {} }, { onState: (state) => states.push(state) });
    send = started.send;
    return started.done.then((output) => ({ output, ran, states }));
  }
  const machine = conversationMachine.provide({
    actors: Object.fromEntries(
      names.map((name) => [name, fromPromise<unknown, StepInput>(({ input, signal }) => steps[name](input, signal))]),
    ) as Record<StepName, ReturnType<typeof fromPromise<unknown, StepInput>>>,
  });
  const actor = createActor(machine, { input: { request: {} } });
  send = (event) => actor.send(event);
  actor.subscribe((snapshot) => {
    if (states.at(-1) !== snapshot.value) states.push(String(snapshot.value));
  });
  const done = toPromise(actor);
  actor.start();
  return done.then((output) => ({ output, ran, states }));
}

const ok = { forward: { ok: true }, relay: { outcome: 'completed', final: true } };

for (const runner of ['xstate', 'step runner'] as const) {

  test(`${runner}: a completed 2xx answer runs every step, injection before forwarding, and settles`, async () => {
    const { output, ran } = await run(runner, ok);
    assert.is(output.status, 'settled');
    assert.equal(ran, ['authenticate', 'resolveConversation', 'inject', 'forward', 'relay', 'settle']);
    assert.equal(output.results.relay, ok.relay);
  });

  test(`${runner}: an upstream error is relayed and nothing is settled`, async () => {
    const { output, ran } = await run(runner, { forward: { ok: false }, relay: { outcome: 'completed', final: false } });
    assert.is(output.status, 'upstream_error');
    assert.not.ok(ran.includes('settle'));
  });

  test(`${runner}: a stream that broke off ends interrupted, without settling`, async () => {
    const { output, ran } = await run(runner, { forward: { ok: true }, relay: { outcome: 'failed', final: false } });
    assert.is(output.status, 'interrupted');
    assert.not.ok(ran.includes('settle'));
  });

  test(`${runner}: a failing step ends the flow with its error`, async () => {
    const failure = new Error('no such token');
    const { output, ran } = await run(runner, { authenticate: failure });
    assert.is(output.status, 'failed');
    assert.is(output.error, failure);
    assert.equal(ran, ['authenticate']);
  });

  test(`${runner}: the client going away aborts the flow wherever it is`, async () => {
    const { output, ran } = await run(runner, ok, { goneDuring: 'forward' });
    assert.is(output.status, 'aborted');
    assert.not.ok(ran.includes('relay'));
  });
}

test('the step runner and XState agree on every path: the states entered, the steps run, the output', async () => {
  const names: StepName[] = ['authenticate', 'resolveConversation', 'inject', 'forward', 'relay', 'settle'];
  const scenarios: Array<[Partial<Record<StepName, unknown | Error>>, { goneDuring?: StepName }]> = [];
  for (const forward of [{ ok: true }, { ok: false }]) {
    for (const outcome of ['completed', 'failed', 'aborted']) {
      for (const final of [true, false]) scenarios.push([{ forward, relay: { outcome, final } }, {}]);
    }
  }
  for (const name of names) {
    scenarios.push([{ ...ok, [name]: new Error(`${name} failed`) }, {}]);
    scenarios.push([ok, { goneDuring: name }]);
  }
  for (const [outputs, options] of scenarios) {
    const [machine, runner] = await Promise.all([run('xstate', outputs, options), run('step runner', outputs, options)]);
    const label = JSON.stringify({ outputs, options });
    assert.equal(runner.states, machine.states, `states, ${label}`);
    assert.equal(runner.ran, machine.ran, `steps, ${label}`);
    assert.equal(runner.output, machine.output, `output, ${label}`);
  }
});

test('the step runner refuses a machine it cannot run, when compiling it', () => {
  const steps = { authenticate: async () => ({}) };
  assert.throws(() => compileStepMachine(conversationMachine, steps), /no step "resolveConversation"/);
});

test.run();
