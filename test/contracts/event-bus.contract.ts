/**
 * The EventBus contract: every adapter (SQLite queue, NATS JetStream) runs this same
 * suite, written only against the port in src/ports/event-bus.ts. Timings are short
 * (ackWait ~100 ms) and assertions are lower bounds or eventual, never tight upper bounds.
 */
import * as assert from 'uvu/assert';
import type { BusMessage, ConsumerOptions, EventBus, QueuedMessage } from '../../src/ports/index.js';
import { busIdle, harnessSuite, sleep, waitFor } from './helpers.js';

export interface EventBusHarness {
  bus: EventBus;
  /** Closes `bus` and opens a new adapter on the same durable storage (a restart). */
  reopen?: () => Promise<EventBus>;
  /** Another bus on the same storage, as a second replica has (closed by `cleanup`). */
  peer?: () => Promise<EventBus>;
  cleanup: () => Promise<void>;
}

/**
 * The ack wait of tests that assert a message was handled once: short, so waiting for
 * idle is quick, yet long enough for a busy machine to ack in time.
 */
const QUIET_ACK_WAIT_MS = 1_000;

interface Seen {
  payload: unknown;
  attempt: number;
  at: number;
}

export function eventBusContract(name: string, open: () => Promise<EventBusHarness>): void {
  const { test, harness } = harnessSuite(`EventBus contract: ${name}`, open);
  const bus = (context: { harness?: EventBusHarness }): EventBus => harness(context).bus;
  // A fresh subject per test keeps tests independent even on a shared server.
  let counter = 0;
  const subject = (): string => `contract.${Date.now().toString(36)}.${++counter}`;
  /** Consumes `s`, recording every delivery (payload, attempt, time) before `settle` handles it. */
  const recording = (b: EventBus, s: string, settle: (message: BusMessage<string>) => Promise<void>, options?: Partial<ConsumerOptions>) => {
    const seen: Seen[] = [];
    const record = async (message: BusMessage<string>) => {
      seen.push({ payload: message.payload, attempt: message.attempt, at: Date.now() });
      await settle(message);
    };
    return { seen, sub: b.consume<string>(s, record, options) };
  };
  /** The bus idle on `subjects` for one ack wait (the consume's, short in these tests): `busIdle`. */
  const idle = (b: EventBus, subjects: string[], deliveries: () => number, ackWaitMs = QUIET_ACK_WAIT_MS) => busIdle(b, subjects, deliveries, ackWaitMs);

  test('publish, consume, ack: delivered once each, in order, then gone', async (context) => {
    const b = bus(context);
    const s = subject();
    const before = Date.now();
    await b.publish(s, { n: 1, nested: { list: [1, 'two', null] } });
    await b.publish(s, { n: 2 });
    await b.publish(s, 'three');
    assert.is(await b.pending(s), 3);
    const seen: BusMessage<unknown>[] = [];
    const sub = b.consume<unknown>(
      s,
      async (message) => {
        seen.push(message);
        await message.ack();
      },
      { ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    await waitFor(() => seen.length === 3, 3000, 'three deliveries');
    await idle(b, [s], () => seen.length);
    await sub.stop();
    assert.equal(
      seen.map((m) => m.payload),
      [{ n: 1, nested: { list: [1, 'two', null] } }, { n: 2 }, 'three'],
    );
    assert.ok(seen.every((m) => m.attempt === 1 && m.subject === s));
    assert.ok(seen.every((m) => m.publishedAt >= before - 1000 && m.publishedAt <= Date.now()));
    assert.is(new Set(seen.map((m) => m.id)).size, 3, 'distinct ids');
    assert.is(await b.pending(s), 0);
    assert.equal(await b.deadLetters(s), []);
  });

  test('subjects are separate', async (context) => {
    const b = bus(context);
    const s1 = subject();
    const s2 = subject();
    await b.publish(s1, 'for one');
    await b.publish(s2, 'for two');
    const seen: unknown[] = [];
    const sub = b.consume<string>(
      s1,
      async (message) => {
        seen.push(message.payload);
        await message.ack();
      },
      { ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    await waitFor(() => seen.length === 1);
    await idle(b, [s1], () => seen.length);
    await sub.stop();
    assert.equal(seen, ['for one']);
    assert.is(await b.pending(s2), 1);
  });

  test('a message published while consuming is delivered', async (context) => {
    const b = bus(context);
    const s = subject();
    const seen: unknown[] = [];
    const sub = b.consume<number>(s, async (message) => {
      seen.push(message.payload);
      await message.ack();
    });
    await sleep(50);
    await b.publish(s, 42);
    await waitFor(() => seen.length === 1);
    await sub.stop();
    assert.equal(seen, [42]);
  });

  test('an unacked message is redelivered after ackWait', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'x');
    // The ack wait runs from the delivery, which is no sooner than the consume: the
    // handler's own start may come later on a busy machine, so it is no lower bound.
    const consumed = Date.now();
    const { seen, sub } = recording(
      b,
      s,
      async (message) => {
        if (message.attempt >= 2) await message.ack();
      },
      { ackWaitMs: 150 },
    );
    await waitFor(() => seen.length === 2, 3000, 'redelivery');
    await sub.stop();
    assert.equal(seen.map((x) => x.attempt), [1, 2]);
    assert.ok(seen[1].at - consumed >= 140, `redelivered ${seen[1].at - consumed} ms after the consume began`);
    assert.is(await b.pending(s), 0);
  });

  test('nak(delay) redelivers no sooner than the delay', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'x');
    const { seen, sub } = recording(b, s, (message) => (message.attempt === 1 ? message.nak({ delayMs: 200 }) : message.ack()), { ackWaitMs: 5000 });
    await waitFor(() => seen.length === 2, 3000, 'redelivery after nak');
    await sub.stop();
    assert.ok(seen[1].at - seen[0].at >= 190, `redelivered after ${seen[1].at - seen[0].at} ms`);
    assert.is(seen[1].attempt, 2);
  });

  test('a throwing handler counts as nak with the consumer backoff', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'x');
    const backoffCalls: number[] = [];
    const { seen, sub } = recording(
      b,
      s,
      async (message) => {
        if (message.attempt < 3) throw new Error('transient');
        await message.ack();
      },
      {
        ackWaitMs: 5000,
        backoffMs: (attempt) => {
          backoffCalls.push(attempt);
          return 100;
        },
      },
    );
    await waitFor(() => seen.length === 3, 3000, 'three attempts');
    await sub.stop();
    assert.equal(seen.map((x) => x.attempt), [1, 2, 3]);
    assert.equal(backoffCalls, [1, 2]);
    assert.ok(seen[1].at - seen[0].at >= 90);
    assert.is(await b.pending(s), 0);
  });

  test('maxDeliver: failed deliveries end as a dead letter that says why the last one failed', async (context) => {
    const b = bus(context);
    const s = subject();
    const silent = subject();
    await b.publish(s, { job: 1 });
    await b.publish(silent, { job: 2 });
    let deliveries = 0;
    const sub = b.consume<unknown>(
      s,
      async (message) => {
        deliveries++;
        await message.nak({ delayMs: 0, reason: `upstream answered 50${message.attempt}` });
      },
      { maxDeliver: 3, ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    let silentDeliveries = 0;
    const quiet = b.consume<unknown>(
      silent,
      (message) => {
        silentDeliveries++;
        return message.nak({ delayMs: 0 });
      },
      { maxDeliver: 2, ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    await waitFor(async () => (await b.deadLetters(s)).length === 1 && (await b.deadLetters(silent)).length === 1, 3000, 'dead letters');
    await idle(b, [s, silent], () => deliveries + silentDeliveries);
    await Promise.all([sub.stop(), quiet.stop()]);
    assert.is(deliveries, 3);
    assert.is(silentDeliveries, 2);
    const [dead] = await b.deadLetters(s);
    assert.is(dead.subject, s);
    assert.equal(dead.payload, { job: 1 });
    assert.is(dead.attempts, 3);
    assert.is(dead.reason, 'gave up after 3 attempts: upstream answered 503');
    assert.is(dead.lastError, 'upstream answered 503');
    assert.ok(dead.failedAt >= dead.publishedAt);
    assert.is(await b.pending(s), 0);
    const [unexplained] = await b.deadLetters(silent);
    assert.is(unexplained.reason, 'gave up after 2 attempts (max deliveries exceeded; no reason given)');
    assert.is(unexplained.lastError, undefined);
  });

  test('maxDeliver also bounds deliveries that are never settled; the dead letter says so, and what failed before', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'stuck');
    let deliveries = 0;
    const sub = b.consume<string>(
      s,
      async (message) => {
        deliveries++;
        // The first delivery fails with a reason; the second is never settled.
        if (message.attempt === 1) await message.nak({ delayMs: 0, reason: 'upstream unreachable: connection refused' });
      },
      { maxDeliver: 2, ackWaitMs: 100 },
    );
    await waitFor(async () => (await b.deadLetters(s)).length === 1, 3000, 'dead letter');
    await sub.stop();
    assert.is(deliveries, 2);
    const [dead] = await b.deadLetters(s);
    assert.match(dead.reason, /^gave up after 2 attempts: the last one never finished \(no ack within the ack wait[^)]*\); before it: upstream unreachable: connection refused$/);
    assert.is(dead.lastError, 'upstream unreachable: connection refused');
  });

  test('term: a dead letter at once with the reason', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, { bad: true });
    let deliveries = 0;
    const sub = b.consume<unknown>(
      s,
      async (message) => {
        deliveries++;
        await message.term('payload rejected');
      },
      { ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    await waitFor(async () => (await b.deadLetters(s)).length === 1, 3000, 'dead letter');
    await idle(b, [s], () => deliveries);
    await sub.stop();
    assert.is(deliveries, 1);
    const [dead] = await b.deadLetters(s);
    assert.is(dead.reason, 'payload rejected');
    assert.is(dead.lastError, 'payload rejected');
    assert.is(dead.attempts, 1);
    assert.equal(dead.payload, { bad: true });
    assert.is(await b.pending(s), 0);
    const other = subject();
    assert.equal(await b.deadLetters(other), []);
    assert.ok((await b.deadLetters()).some((d) => d.subject === s), 'listed without a subject filter');
  });

  test('notBefore: not delivered before the instant', async (context) => {
    const b = bus(context);
    const s = subject();
    const notBefore = Date.now() + 300;
    await b.publish(s, 'later', { notBefore });
    await b.publish(s, 'now');
    const { seen, sub } = recording(b, s, (message) => message.ack());
    await waitFor(() => seen.length === 2, 3000, 'both messages');
    await sub.stop();
    assert.equal(seen.map((x) => x.payload), ['now', 'later']);
    assert.ok(seen[1].at >= notBefore, 'delivered at or after notBefore');
  });

  test('msgId: a duplicate publish within the dedup window is a no-op', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'first', { msgId: 'conv-1:turn-4' });
    await b.publish(s, 'second', { msgId: 'conv-1:turn-4' });
    await b.publish(s, 'other', { msgId: 'conv-1:turn-5' });
    assert.is(await b.pending(s), 2);
    const seen: unknown[] = [];
    const sub = b.consume<string>(
      s,
      async (message) => {
        seen.push(message.payload);
        await message.ack();
      },
      { ackWaitMs: QUIET_ACK_WAIT_MS },
    );
    await waitFor(() => seen.length === 2);
    await idle(b, [s], () => seen.length);
    await sub.stop();
    assert.equal(seen, ['first', 'other']);
  });

  test('supersedes: every message not superseded is delivered once; the newest of a key always', async (context) => {
    const b = bus(context);
    const s = subject();
    const other = subject();
    const later = Date.now() + 1_500;
    await b.publish(s, 'conv-1 turn 1', { notBefore: later, supersedes: 'conv-1' });
    await b.publish(s, 'conv-2 turn 1', { notBefore: later, supersedes: 'conv-2' });
    await b.publish(other, 'elsewhere', { notBefore: later, supersedes: 'conv-1' });
    await b.publish(s, 'due now', { supersedes: 'conv-3' });
    await b.publish(s, 'conv-3 later', { notBefore: later, supersedes: 'conv-3' });
    await b.publish(s, 'conv-1 turn 2', { notBefore: later, supersedes: 'conv-1' });
    await b.publish(s, 'no key', { notBefore: later });
    const { seen, sub } = recording(b, s, (message) => message.ack(), { ackWaitMs: QUIET_ACK_WAIT_MS });
    const expected = ['conv-1 turn 2', 'conv-2 turn 1', 'conv-3 later', 'due now', 'no key'];
    await waitFor(() => expected.every((payload) => seen.some((x) => x.payload === payload)), 6000, 'the five that stand');
    // Every due time has passed, then idle: nothing is left to deliver.
    await waitFor(() => Date.now() > later, 6000, 'the due time');
    await idle(b, [s], () => seen.length);
    await sub.stop();
    const delivered = seen.map((x) => x.payload as string);
    assert.equal(delivered.filter((payload) => payload !== 'conv-1 turn 1').sort(), expected, 'each once');
    assert.ok(delivered.filter((payload) => payload === 'conv-1 turn 1').length <= 1, 'a superseded message at most once');
    assert.is(await b.pending(other), 1, 'a key supersedes on its own subject only');
  });

  test('concurrency: at most N handlers at once', async (context) => {
    const b = bus(context);
    const s = subject();
    for (let i = 0; i < 6; i++) await b.publish(s, i);
    let running = 0;
    let peak = 0;
    let done = 0;
    const sub = b.consume<number>(
      s,
      async (message) => {
        running++;
        peak = Math.max(peak, running);
        await sleep(60);
        running--;
        done++;
        await message.ack();
      },
      { concurrency: 2 },
    );
    await waitFor(() => done === 6, 5000, 'six handled');
    await sub.stop();
    assert.is(peak, 2);
  });

  test('stop waits for running handlers', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'x');
    let started = false;
    let finished = false;
    const sub = b.consume<string>(s, async (message) => {
      started = true;
      await sleep(200);
      finished = true;
      await message.ack();
    });
    await waitFor(() => started);
    await sub.stop();
    assert.ok(finished, 'stop resolved only after the handler finished');
    assert.is(await b.pending(s), 0);
  });

  test('durable: published messages survive a restart', async (context) => {
    const harness = context.harness;
    if (!harness?.reopen) return;
    const s = subject();
    await harness.bus.publish(s, { durable: true });
    const reopened = await harness.reopen();
    assert.is(await reopened.pending(s), 1);
    const seen: unknown[] = [];
    const sub = reopened.consume<unknown>(s, async (message) => {
      seen.push(message.payload);
      await message.ack();
    });
    await waitFor(() => seen.length === 1);
    await sub.stop();
    assert.equal(seen, [{ durable: true }]);
  });

  test('a message in flight at a crash is redelivered after its ackWait', async (context) => {
    const harness = context.harness;
    if (!harness?.reopen) return;
    const s = subject();
    await harness.bus.publish(s, 'in flight');
    let delivered = false;
    // The handler returns without settling: to the bus that is a crash mid-handler.
    const first = harness.bus.consume<string>(
      s,
      async () => {
        delivered = true;
      },
      { ackWaitMs: 150 },
    );
    await waitFor(() => delivered);
    await first.stop();
    const reopened = await harness.reopen();
    const seen: number[] = [];
    const sub = reopened.consume<string>(
      s,
      async (message) => {
        seen.push(message.attempt);
        await message.ack();
      },
      { ackWaitMs: 150 },
    );
    await waitFor(() => seen.length === 1, 3000, 'redelivery after restart');
    await sub.stop();
    assert.equal(seen, [2]);
  });

  test('working() restarts the ack wait: a long handler is not redelivered', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'long job');
    const { seen, sub } = recording(
      b,
      s,
      async (message) => {
        // Four ack waits long, with a heartbeat every half ack wait.
        for (let i = 0; i < 8; i++) {
          await sleep(100);
          await message.working();
        }
        await message.ack();
      },
      { ackWaitMs: 200 },
    );
    await waitFor(async () => seen.length === 1 && (await b.pending(s)) === 0, 5000, 'the job acked');
    await idle(b, [s], () => seen.length, 200);
    await sub.stop();
    assert.is(seen.length, 1, 'delivered once');
  });

  test('pending counts messages waiting for notBefore too', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'later', { notBefore: Date.now() + 60_000 });
    await b.publish(s, 'now');
    await waitFor(async () => (await b.pending(s)) === 2, 3000, 'two pending');
  });

  test('retryDeadLetter publishes the payload again as a fresh message', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, { job: 'retry me' });
    let fail = true;
    const { seen, sub } = recording(b, s, (message) => (fail ? message.term('upstream refused') : message.ack()));
    await waitFor(async () => (await b.deadLetters(s)).length === 1, 3000, 'dead letter');
    const [dead] = await b.deadLetters(s);
    fail = false;
    assert.is(await b.retryDeadLetter(dead.id), true);
    assert.is(await b.retryDeadLetter(dead.id), false, 'gone once retried');
    assert.is(await b.retryDeadLetter('999999999'), false);
    await waitFor(() => seen.length === 2, 3000, 'redelivered after the retry');
    await waitFor(async () => (await b.pending(s)) === 0, 3000, 'acked');
    await sub.stop();
    assert.equal(seen.map((x) => [x.payload, x.attempt]), [
      [{ job: 'retry me' }, 1],
      [{ job: 'retry me' }, 1],
    ]);
    assert.equal(await b.deadLetters(s), []);
  });

  test('queued lists the pending messages: waiting with their due time, ready, delivered; gone once acked', async (context) => {
    const b = bus(context);
    const s = subject();
    const other = subject();
    const dueAt = Date.now() + 60_000;
    await b.publish(s, { job: 'later' }, { notBefore: dueAt });
    await b.publish(s, { job: 'first' });
    await b.publish(s, { job: 'second' });
    await b.publish(other, { job: 'elsewhere' });
    const jobOf = (message: { payload: unknown }) => (message.payload as { job: string }).job;

    const before = await b.queued(s);
    // Oldest publish first, to the millisecond: three publishes may share one, and a
    // delayed message may then be listed before or after the ready ones of that instant.
    assert.equal([...before.map(jobOf)].sort(), ['first', 'later', 'second'], 'this subject only');
    assert.ok(before.every((m, i) => i === 0 || before[i - 1].publishedAt <= m.publishedAt), 'oldest publish first');
    assert.equal(before.map(jobOf).filter((job) => job !== 'later'), ['first', 'second'], 'in publish order');
    const waiting = before.find((m) => jobOf(m) === 'later');
    assert.equal([waiting?.state, waiting?.dueAt], ['waiting', dueAt]);
    assert.equal(before.filter((m) => m.state === 'ready').map(jobOf), ['first', 'second']);
    assert.ok(before.every((m) => m.subject === s && typeof m.id === 'string' && m.publishedAt <= Date.now()));
    assert.equal((await b.queued(s, { limit: 2 })).length, 2);

    // A handler holding the first message: it is listed as delivered until acked.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const handled: string[] = [];
    const sub = b.consume<{ job: string }>(s, async (message) => {
      handled.push(message.payload.job);
      if (message.payload.job === 'first') await held;
      await message.ack();
    }, { concurrency: 1, ackWaitMs: 30_000 });
    await waitFor(() => handled.length === 1, 3000, 'the first delivery');
    const during = await b.queued(s);
    assert.is(during.find((m) => jobOf(m) === 'first')?.state, 'delivered');
    assert.is(during.find((m) => jobOf(m) === 'later')?.state, 'waiting');
    release();
    await waitFor(async () => (await b.queued(s)).length === 1, 3000, 'both acked');
    await sub.stop();
    const after = await b.queued(s);
    assert.equal([after[0] && jobOf(after[0]), after[0]?.state], ['later', 'waiting']);
    assert.equal((await b.queued(other)).map(jobOf), ['elsewhere']);
  });

  test('queued: a message failed with nak(delay) is retrying until its due time, with the attempt and why it failed', async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'flaky');
    let failedAt = 0;
    const sub = b.consume<string>(s, async (message) => {
      failedAt = Date.now();
      await message.nak({ delayMs: 60_000, reason: 'upstream answered 401 Unauthorized' });
    });
    await waitFor(() => failedAt > 0, 3000, 'the first delivery');
    await waitFor(async () => (await b.queued(s))[0]?.state === 'retrying', 3000, 'the failure to be recorded');
    await sub.stop();
    const [listed] = await b.queued(s);
    assert.ok((listed.dueAt ?? 0) >= failedAt + 59_000, 'due when the nak said');
    assert.is(listed.attempts, 1);
    assert.is(listed.lastError, 'upstream answered 401 Unauthorized');
  });

  test("a throwing handler's error message is the failure's reason; the next delivery's ack leaves no trace of it", async (context) => {
    const b = bus(context);
    const s = subject();
    await b.publish(s, 'job');
    let deliveries = 0;
    const sub = b.consume<string>(
      s,
      async (message) => {
        deliveries++;
        if (message.attempt === 1) throw new Error('timed out: no answer from the upstream in 90 s');
        await message.ack();
      },
      { backoffMs: () => 1_500, ackWaitMs: 5000 },
    );
    let failed: QueuedMessage | undefined;
    await waitFor(async () => (failed = (await b.queued(s))[0])?.state === 'retrying', 3000, 'the failed delivery');
    assert.is(failed?.lastError, 'timed out: no answer from the upstream in 90 s');
    await waitFor(async () => (await b.pending(s)) === 0, 5000, 'the second delivery acked');
    await sub.stop();
    assert.is(deliveries, 2);
    assert.equal(await b.queued(s), []);
    assert.equal(await b.deadLetters(s), []);
  });

  test('two consumers of one subject on one storage share its messages: each is handled once', async (context) => {
    const h = harness(context);
    const other = h.peer ? await h.peer() : h.bus;
    const s = subject();
    const handled: string[] = [];
    const by = { first: 0, second: 0 };
    const consumer = (b: EventBus, name: keyof typeof by) =>
      b.consume<number>(
        s,
        async (message) => {
          handled.push(String(message.payload));
          by[name]++;
          await sleep(5);
          await message.ack();
        },
        { ackWaitMs: QUIET_ACK_WAIT_MS },
      );
    const first = consumer(h.bus, 'first');
    const second = consumer(other, 'second');
    for (let i = 0; i < 30; i++) await (i % 2 ? other : h.bus).publish(s, i);
    await waitFor(() => handled.length >= 30, 5000, 'thirty handled');
    await idle(h.bus, [s], () => handled.length);
    await Promise.all([first.stop(), second.stop()]);
    assert.is(handled.length, 30, 'no message handled twice');
    assert.is(new Set(handled).size, 30);
  });

  test.run();
}
