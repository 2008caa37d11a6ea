/**
 * The conversation machine's flow, with step implementations that only report back:
 * which steps run, in which order, and how each ending is reported.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor, fromPromise, toPromise } from 'xstate';
import { conversationMachine, type StepInput, type StepName } from '../../machines/conversation.machine.js';

function run(outputs: Partial<Record<StepName, unknown | Error>>, options: { goneDuring?: StepName } = {}) {
  const ran: StepName[] = [];
  const step = (name: StepName) =>
    fromPromise<unknown, StepInput>(async ({ signal }) => {
      ran.push(name);
      if (options.goneDuring === name) {
        actor.send({ type: 'CLIENT_GONE' });
        assert.ok(signal.aborted, 'the running step is told to stop');
      }
      const output = outputs[name];
      if (output instanceof Error) throw output;
      return output ?? {};
    });
  const machine = conversationMachine.provide({
    actors: {
      authenticate: step('authenticate'),
      resolveConversation: step('resolveConversation'),
      inject: step('inject'),
      forward: step('forward'),
      relay: step('relay'),
      settle: step('settle'),
    },
  });
  const actor = createActor(machine, { input: { request: {} } });
  const done = toPromise(actor);
  actor.start();
  return done.then((output) => ({ output, ran }));
}

const ok = { forward: { ok: true }, relay: { outcome: 'completed', final: true } };

test('a completed 2xx answer runs every step, injection before forwarding, and settles', async () => {
  const { output, ran } = await run(ok);
  assert.is(output.status, 'settled');
  assert.equal(ran, ['authenticate', 'resolveConversation', 'inject', 'forward', 'relay', 'settle']);
  assert.equal(output.results.relay, ok.relay);
});

test('an upstream error is relayed and nothing is settled', async () => {
  const { output, ran } = await run({ forward: { ok: false }, relay: { outcome: 'completed', final: false } });
  assert.is(output.status, 'upstream_error');
  assert.not.ok(ran.includes('settle'));
});

test('a stream that broke off ends interrupted, without settling', async () => {
  const { output, ran } = await run({ forward: { ok: true }, relay: { outcome: 'failed', final: false } });
  assert.is(output.status, 'interrupted');
  assert.not.ok(ran.includes('settle'));
});

test('a failing step ends the flow with its error', async () => {
  const failure = new Error('no such token');
  const { output, ran } = await run({ authenticate: failure });
  assert.is(output.status, 'failed');
  assert.is(output.error, failure);
  assert.equal(ran, ['authenticate']);
});

test('the client going away aborts the flow wherever it is', async () => {
  const { output, ran } = await run(ok, { goneDuring: 'forward' });
  assert.is(output.status, 'aborted');
  assert.not.ok(ran.includes('relay'));
});

test.run();
