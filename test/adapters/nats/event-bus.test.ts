/**
 * The NATS JetStream event bus on a real nats-server (Debian's 2.9 in CI): the shared
 * EventBus contract (with restarts and a second replica), then what only this adapter
 * has: the subject encoding on the wire, the streams it creates, the delay scheduler,
 * the Object Store for big payloads, and surviving a nats-server restart.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Objm } from '@nats-io/obj';
import { connectNats, type NatsContext } from '../../../src/adapters/nats/connection.js';
import { NatsEventBus, type NatsEventBusOptions } from '../../../src/adapters/nats/event-bus.js';
import { BUS_HEADERS, subjectMatches, subjectToken } from '../../../src/adapters/nats/bus-subjects.js';
import { DEDUP_WINDOW_MS, type BusMessage } from '../../../src/ports/index.js';
import { startNatsServer } from '../../support/nats-server.js';
import { eventBusContract } from '../../contracts/event-bus.contract.js';
import { busIdle, rejects, sleep, waitFor } from '../../contracts/helpers.js';

// One server for the file; every harness and test gets its own streams and subjects.
const server = await startNatsServer();
const admin = await connectNats({ url: server.url, name: 'engram test admin' });
let namespaces = 0;

/** Fresh stream names and subject prefix, so tests never see each other's messages. */
function namespace(label: string): Required<Pick<NatsEventBusOptions, 'stream' | 'subjectPrefix'>> {
  const n = ++namespaces;
  return { stream: `${label.toUpperCase()}_${n}`, subjectPrefix: `${label.toLowerCase()}${n}.bus` };
}

/** Keeps the shared server small: a test's streams (and payload bucket) go with it. */
async function dropStreams(stream: string): Promise<void> {
  for (const name of [stream, `${stream}_DELAY`, `${stream}_DEAD`, `${stream}_FAILED`, `${stream}_SETTLED`, `OBJ_${stream.toLowerCase()}_payloads`]) {
    await admin.jsm.streams.delete(name).catch(() => false);
  }
}

/** Buses and connections opened by one test (each bus on its own connection, as a replica has). */
function replicas(options: NatsEventBusOptions & { stream: string }) {
  const opened: { bus: NatsEventBus; nats: NatsContext }[] = [];
  const errors: unknown[] = [];
  return {
    errors,
    async open(extra: Partial<NatsEventBusOptions> = {}): Promise<NatsEventBus> {
      const nats = await connectNats({ url: server.url, timeoutMs: 2_000 });
      const bus = await NatsEventBus.open(nats, { onError: (error) => errors.push(error), ...options, ...extra });
      opened.push({ bus, nats });
      return bus;
    },
    /** Closes the bus and its connection, as a process exit does. */
    async crash(bus: NatsEventBus): Promise<void> {
      const index = opened.findIndex((entry) => entry.bus === bus);
      const [entry] = opened.splice(index, 1);
      await entry.bus.close();
      await entry.nats.close();
    },
    async cleanup(): Promise<void> {
      for (const { bus, nats } of opened.splice(0)) {
        await bus.close();
        await nats.close();
      }
      await dropStreams(options.stream);
    },
  };
}

eventBusContract('nats jetstream 2.9', async () => {
  const group = replicas(namespace('contract'));
  let bus = await group.open();
  return {
    bus,
    reopen: async () => {
      await group.crash(bus);
      bus = await group.open();
      return bus;
    },
    peer: () => group.open(),
    cleanup: async () => {
      // The contract never interrupts the server: anything the bus had to survive is a
      // finding worth seeing (a hook that throws would make uvu run it twice).
      for (const error of group.errors) console.error('event bus error during the contract:', error);
      await group.cleanup();
    },
  };
});

const nats = suite('NatsEventBus specifics');

/** Consumes `subject`, recording each delivery with its arrival time, and acks it. */
function collect<T>(bus: NatsEventBus, subject: string, options: Parameters<NatsEventBus['consume']>[2] = {}) {
  const seen: { message: BusMessage<T>; at: number }[] = [];
  const sub = bus.consume<T>(
    subject,
    async (message) => {
      seen.push({ message, at: Date.now() });
      await message.ack();
    },
    options,
  );
  return { seen, sub };
}

nats('the sweep tells which consumer a stored message belongs to by the server\'s subject rules', () => {
  assert.ok(subjectMatches('engram.bus.w.jobs', 'engram.bus.w.jobs'));
  assert.not.ok(subjectMatches('engram.bus.w.jobs', 'engram.bus.w.jobs2'));
  assert.not.ok(subjectMatches('engram.bus.w.jobs', 'engram.bus.w'));
  assert.ok(subjectMatches('engram.bus.d.>', 'engram.bus.d.jobs'));
  assert.ok(subjectMatches('engram.bus.d.>', 'engram.bus.d.jobs.more'));
  assert.not.ok(subjectMatches('engram.bus.d.>', 'engram.bus.d'));
  assert.ok(subjectMatches('engram.*.d.jobs', 'engram.bus.d.jobs'));
  assert.not.ok(subjectMatches('engram.*.d.jobs', 'engram.bus.w.jobs'));
});

nats('open refuses a server older than 2.9.4, naming its version', async () => {
  await rejects(() => NatsEventBus.open({ ...admin, serverVersion: '2.8.4' }), /nats-server 2\.8\.4 is too old/);
  await rejects(() => NatsEventBus.open({ ...admin, serverVersion: '2.9.1' }), /2\.9\.1 is too old.*2\.9\.4/);
});

nats('two replicas starting together both open; the streams are as designed', async () => {
  const names = namespace('startup');
  const group = replicas({ ...names, dedupWindowMs: 1_000 });
  try {
    await Promise.all([group.open(), group.open(), group.open()]);
    const work = await admin.jsm.streams.info(names.stream);
    assert.is(work.config.retention, 'workqueue');
    assert.is(work.config.storage, 'file');
    assert.equal(work.config.subjects, [`${names.subjectPrefix}.q.>`]);
    assert.is(work.config.duplicate_window, DEDUP_WINDOW_MS * 1e6, 'a shorter dedup window is raised to the port minimum');
    const delay = await admin.jsm.streams.info(`${names.stream}_DELAY`);
    assert.is(delay.config.retention, 'workqueue');
    assert.equal(delay.config.subjects, [`${names.subjectPrefix}.d.>`]);
    const dead = await admin.jsm.streams.info(`${names.stream}_DEAD`);
    assert.is(dead.config.retention, 'limits');
    assert.is(dead.config.allow_direct, true);
    const failed = await admin.jsm.streams.info(`${names.stream}_FAILED`);
    assert.equal([failed.config.retention, failed.config.max_msgs_per_subject, failed.config.allow_direct], ['limits', 1, true]);
    assert.equal(failed.config.subjects, [`${names.subjectPrefix}.failed.>`]);
    // A later start with a longer window updates the existing streams in place.
    await group.open({ dedupWindowMs: 5 * 60_000 });
    assert.is((await admin.jsm.streams.info(names.stream)).config.duplicate_window, 5 * 60_000 * 1e6);
  } finally {
    await group.cleanup();
  }
});

nats('port subjects with dots, wildcards and spaces stay separate on the wire', async () => {
  const subjects = ['a', 'a.b', 'a.*', 'a.>', 'a b', 'a_2Eb', 'a__b', 'ünï', '', 'x'.repeat(300), 'x'.repeat(301)];
  assert.is(new Set(subjects.map(subjectToken)).size, subjects.length, 'one token per subject');
  assert.ok(subjects.every((s) => /^[A-Za-z0-9_-]+$/.test(subjectToken(s))), 'tokens are safe NATS tokens and file names');
  const group = replicas(namespace('subjects'));
  try {
    const bus = await group.open();
    for (const s of subjects) await bus.publish(s, s);
    for (const s of subjects) assert.is(await bus.pending(s), 1, `pending(${JSON.stringify(s.slice(0, 10))})`);
    const consumers = subjects.map((s) => ({ s, ...collect<string>(bus, s, { ackWaitMs: 1_000 }) }));
    await waitFor(() => consumers.every((c) => c.seen.length === 1), 5000, 'one delivery per subject');
    // Idle: all acked, then one ack wait, within which a delivery left unsettled would come back.
    await waitFor(async () => (await Promise.all(subjects.map((s) => bus.pending(s)))).every((n) => n === 0), 5000, 'all acked');
    await sleep(1_000);
    await Promise.all(consumers.map((c) => c.sub.stop()));
    for (const c of consumers) {
      assert.equal(c.seen.map((x) => x.message.payload), [c.s]);
      assert.is(c.seen[0].message.subject, c.s);
    }
  } finally {
    await group.cleanup();
  }
});

nats('a msgId is deduplicated per subject, delayed messages included', async () => {
  const group = replicas(namespace('dedup'));
  try {
    const bus = await group.open();
    const later = Date.now() + 60_000;
    await bus.publish('one', 'first', { msgId: 'same', notBefore: later });
    await bus.publish('one', 'second', { msgId: 'same', notBefore: later });
    await bus.publish('two', 'other subject', { msgId: 'same' });
    await bus.publish('two', 'line\nbreak id', { msgId: 'id\r\nwith breaks' });
    await bus.publish('two', 'again', { msgId: 'id\r\nwith breaks' });
    assert.is(await bus.pending('one'), 1);
    assert.is(await bus.pending('two'), 2);
  } finally {
    await group.cleanup();
  }
});

nats('notBefore: the scheduler releases messages within tens of ms of their due time', async () => {
  const group = replicas(namespace('punctual'));
  try {
    const bus = await group.open();
    const { seen, sub } = collect<number>(bus, 'later');
    await sleep(50); // the scheduler is pulling
    const start = Date.now();
    // 300 ms is held in memory at once; 1.6 s and 2.5 s first wait on the server (nak delay).
    const dues = [start + 300, start + 1_600, start + 2_500];
    for (const due of dues) await bus.publish('later', due, { notBefore: due });
    await waitFor(() => seen.length === 3, 6000, 'three delayed messages');
    await sub.stop();
    for (const { message, at } of seen) {
      const due = message.payload;
      assert.ok(at >= due, `delivered ${due - at} ms early`);
      assert.ok(at - due < 80, `delivered ${at - due} ms late`);
      assert.is(message.attempt, 1, 'the first real delivery is attempt 1');
      assert.ok(message.publishedAt >= start && message.publishedAt < due, 'publishedAt is the publish, not the move');
    }
    assert.is(await bus.pending('later'), 0);
  } finally {
    await group.cleanup();
  }
});

nats('a closing scheduler releases the messages it held on time, and another replica delivers them', async () => {
  const group = replicas(namespace('handover'));
  try {
    const first = await group.open();
    const idle = first.consume('unrelated', async () => {}); // starts first's scheduler
    await sleep(50);
    const due = Date.now() + 600;
    await first.publish('job', 'held', { notBefore: due });
    await sleep(150); // first's scheduler now holds it in memory
    await idle.stop();
    await group.crash(first);
    const second = await group.open();
    const { seen, sub } = collect<string>(second, 'job');
    await waitFor(() => seen.length === 1, 3000, 'delivery by the second replica');
    await sub.stop();
    assert.ok(seen[0].at >= due);
    assert.ok(seen[0].at - due < 200, `${seen[0].at - due} ms late (not after the scheduler's 10 s ack wait)`);
  } finally {
    await group.cleanup();
  }
});

nats('a scheduler closing while 50 delayed messages come due releases those it held: each is delivered once, on time', async () => {
  const group = replicas(namespace('handover-many'));
  try {
    const first = await group.open();
    const unrelated = first.consume('unrelated', async () => {}); // starts first's scheduler
    const second = await group.open(); // its scheduler starts only when it consumes, after first closed
    await sleep(50);
    const start = Date.now();
    // Most are due within the hold (the last few come back from a nak first). When first closes, half
    // still wait in its memory: a nak back to the server then could reach first's dead pull request
    // (2.9 gives redeliveries to the oldest one) and come back one ack wait (10 s) late.
    const dues = Array.from({ length: 50 }, (_, i) => start + 600 + i * 10);
    for (const [i, due] of dues.entries()) await first.publish('job', i, { notBefore: due });
    await sleep(start + 850 - Date.now());
    await unrelated.stop();
    await group.crash(first);
    const { seen, sub } = collect<number>(second, 'job', { ackWaitMs: 1_000 });
    await waitFor(() => seen.length >= dues.length, 5_000, 'every message delivered by the second replica');
    await busIdle(second, ['job'], () => seen.length, 1_000);
    await sub.stop();
    assert.equal(seen.map((x) => x.message.payload).sort((x, y) => x - y), dues.map((_, i) => i), 'each delivered once');
    for (const { message, at } of seen) {
      const late = at - dues[message.payload];
      assert.ok(late >= 0 && late < 1_000, `message ${message.payload} delivered ${late} ms after its due time (not after the scheduler's 10 s ack wait)`);
      assert.is(message.attempt, 1);
    }
  } finally {
    await group.cleanup();
  }
});


nats("the scheduler's consumer deleted by an operator is created again, and delayed messages still move on time", async () => {
  const names = namespace('scheduler-gone');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const { seen, sub } = collect<number>(bus, 'later');
    const scheduler = () => admin.jsm.consumers.info(`${names.stream}_DELAY`, 'scheduler');
    await waitFor(async () => (await scheduler().catch(() => undefined))?.num_waiting === 1, 3_000, 'the scheduler pulling');
    await admin.jsm.consumers.delete(`${names.stream}_DELAY`, 'scheduler');
    await waitFor(async () => (await scheduler().catch(() => undefined))?.num_waiting === 1, 6_000, 'the scheduler pulling again');
    const due = Date.now() + 300;
    await bus.publish('later', due, { notBefore: due });
    await waitFor(() => seen.length === 1, 3_000, 'the delayed message');
    await sub.stop();
    assert.ok(seen[0].at >= due && seen[0].at - due < 200, `delivered ${seen[0].at - due} ms after its due time`);
    assert.ok(group.errors.length > 0, 'the loss was reported through onError');
  } finally {
    await group.cleanup();
  }
});

nats('a 3 MB payload travels through the Object Store, which is emptied after the ack', async () => {
  const names = namespace('big');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const big = { text: 'x'.repeat(3 * 1024 * 1024), tail: 'end' };
    await bus.publish('big', big);
    const stored = await admin.jsm.streams.getMessage(names.stream, { seq: 1 });
    const object = stored?.header?.get(BUS_HEADERS.payloadObject);
    assert.ok(object, 'the message references an object');
    assert.is(stored?.data.length, 0, 'the message itself carries no body');
    const objects = await new Objm(admin.js).open(`${names.stream.toLowerCase()}_payloads`);
    assert.ok(((await objects.info(object))?.size ?? 0) > 3 * 1024 * 1024, 'the object holds the whole JSON');
    const { seen, sub } = collect<typeof big>(bus, 'big');
    await waitFor(() => seen.length === 1, 5000, 'the big message');
    await sub.stop();
    assert.is(seen[0].message.payload.text.length, big.text.length);
    assert.is(seen[0].message.payload.tail, 'end');
    await waitFor(async () => (await objects.getBlob(object)) === null, 3000, 'the object deleted after the ack');
    assert.is(await bus.pending('big'), 0);
  } finally {
    await group.cleanup();
  }
});

nats('a big dead letter keeps its object until retried and acked', async () => {
  const names = namespace('bigdead');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const big = 'y'.repeat(2 * 1024 * 1024);
    await bus.publish('big', big);
    let refuse = true;
    const seen: number[] = [];
    const sub = bus.consume<string>('big', async (message) => {
      seen.push(message.payload.length);
      if (refuse) await message.term('refused');
      else await message.ack();
    });
    await waitFor(async () => (await bus.deadLetters('big')).length === 1, 5000, 'dead letter');
    const [dead] = await bus.deadLetters('big');
    assert.is(dead.payload, big, 'the dead letter shows the whole payload');
    const objects = await new Objm(admin.js).open(`${names.stream.toLowerCase()}_payloads`);
    assert.is((await objects.list()).length, 1, 'the object outlives the original message');
    refuse = false;
    assert.ok(await bus.retryDeadLetter(dead.id));
    await waitFor(() => seen.length === 2, 5000, 'the retried message');
    await waitFor(async () => (await objects.list()).length === 0, 3000, 'the object deleted after the retry was acked');
    await sub.stop();
    assert.equal(seen, [big.length, big.length]);
  } finally {
    await group.cleanup();
  }
});

nats('a replica asks for a message only when a slot is free: nothing waits in its buffer while another replica could take it', async () => {
  const names = namespace('asks-when-free');
  const group = replicas(names);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  try {
    const first = await group.open();
    const handled: { payload: number; attempt: number; by: string; at: number }[] = [];
    const handler = (by: string) => async (message: BusMessage<number>) => {
      handled.push({ payload: message.payload, attempt: message.attempt, by, at: Date.now() });
      if (message.payload === 1) {
        // Longer than three of the pull's 2 s heartbeats, kept alive past its 2 s ack wait:
        // a consumer that re-pulls on missed heartbeats would fill its buffer meanwhile.
        for (let i = 0; i < 12; i++) {
          await sleep(600);
          await message.working();
        }
      }
      if (message.payload === 2) {
        let released = false;
        void held.then(() => (released = true));
        while (!released) {
          await sleep(300);
          await message.working();
        }
      }
      await message.ack();
    };
    const a = first.consume<number>('jobs', handler('first'), { concurrency: 1, ackWaitMs: 2_000 });
    // The consumer's deliveries not yet acked, sampled every 100 ms for as long as `during` runs.
    const peakAckPending = async (during: () => Promise<void>): Promise<number> => {
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const info = await admin.jsm.consumers.info(names.stream, `q_${subjectToken('jobs')}`).catch(() => undefined);
          peak = Math.max(peak, info?.num_ack_pending ?? 0);
          await sleep(100);
        }
      })();
      try {
        await during();
      } finally {
        sampling = false;
        await sampler;
      }
      return peak;
    };
    const peak = await peakAckPending(async () => {
      await first.publish('jobs', 1);
      await waitFor(() => handled.length === 1, 3_000, 'the long job');
      for (let n = 2; n <= 5; n++) await first.publish('jobs', n);
      await waitFor(() => handled.length === 2, 12_000, 'the second job, once the long one is done');
      // The only slot is busy again: everything else stays on the server, for anyone.
      await sleep(2_000);
    });
    assert.is(peak, 1, 'never more than the message in hand delivered to the busy replica');
    const second = await group.open();
    const started = Date.now();
    const b = second.consume<number>('jobs', handler('second'), { concurrency: 1, ackWaitMs: 2_000 });
    await waitFor(() => handled.some((x) => x.by === 'second'), 3_000, 'a delivery to the idle replica');
    const taken = handled.find((x) => x.by === 'second');
    assert.is(taken?.payload, 3, 'the next message in line went to the idle replica');
    assert.ok((taken?.at ?? Infinity) - started < 500, `the idle replica waited ${(taken?.at ?? Infinity) - started} ms for it`);
    release();
    await waitFor(async () => (await first.pending('jobs')) === 0, 5_000, 'all acked');
    await Promise.all([a.stop(), b.stop()]);
    assert.equal(handled.map((x) => x.payload).sort((x, y) => x - y), [1, 2, 3, 4, 5], 'each handled once');
    assert.ok(handled.every((x) => x.attempt === 1), 'no delivery waited out its ack wait in a buffer');
  } finally {
    release(); // a failed assertion must not leave the cleanup waiting on a handler
    await group.cleanup();
  }
});

nats('a delivery past maxDeliver is dead-lettered without reaching the handler', async () => {
  const group = replicas(namespace('unsettled'));
  try {
    const bus = await group.open();
    await bus.publish('stuck', { n: 1 });
    const attempts: number[] = [];
    const sub = bus.consume<unknown>('stuck', async (message) => void attempts.push(message.attempt), {
      maxDeliver: 3,
      ackWaitMs: 100,
    });
    await waitFor(async () => (await bus.deadLetters('stuck')).length === 1, 3000, 'dead letter');
    await busIdle(bus, ['stuck'], () => attempts.length, 100);
    await sub.stop();
    assert.equal(attempts, [1, 2, 3]);
    const [dead] = await bus.deadLetters('stuck');
    assert.is(dead.attempts, 3, 'the deliveries the handler saw');
    assert.match(dead.reason, /^gave up after 3 attempts: the last one never finished/);
    assert.equal(dead.payload, { n: 1 });
    assert.is(await bus.pending('stuck'), 0, 'terminated in the work queue, not stored forever');
  } finally {
    await group.cleanup();
  }
});

nats('why a delivery failed is kept beside the message until it is settled: the failed stream holds nothing once the retry is acked', async () => {
  const names = namespace('failed');
  const group = replicas(names);
  try {
    const bus = await group.open();
    await bus.publish('flaky', 'one');
    await bus.publish('doomed', 'two');
    const flaky = bus.consume<string>('flaky', (message) => (message.attempt === 1 ? message.nak({ delayMs: 300, reason: 'upstream answered 503 Service Unavailable' }) : message.ack()));
    const doomed = bus.consume<string>('doomed', (message) => message.nak({ delayMs: 0, reason: `attempt ${message.attempt} failed` }), { maxDeliver: 2 });
    const recorded = async () => (await admin.jsm.streams.info(`${names.stream}_FAILED`)).state.messages;
    await waitFor(async () => (await bus.pending('flaky')) + (await bus.pending('doomed')) === 0, 5000, 'both settled');
    await Promise.all([flaky.stop(), doomed.stop()]);
    assert.is(await recorded(), 0, 'no record outlives its message');
    const [dead] = await bus.deadLetters('doomed');
    assert.equal([dead.reason, dead.lastError], ['gave up after 2 attempts: attempt 2 failed', 'attempt 2 failed']);
  } finally {
    await group.cleanup();
  }
});

nats('a consumer deleted while no pull was waiting (the server says nothing) is created again', async () => {
  const names = namespace('recreate-busy');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const seen: number[] = [];
    let release!: () => void;
    const busy = new Promise<void>((resolve) => (release = resolve));
    const sub = bus.consume<number>(
      'jobs',
      async (message) => {
        seen.push(message.payload);
        if (message.payload === 1) await busy;
        await message.ack();
      },
      { concurrency: 1 },
    );
    await bus.publish('jobs', 1);
    await waitFor(() => seen.length === 1);
    // The only slot is in its handler: no pull request is open when the consumer goes.
    await admin.jsm.consumers.delete(names.stream, `q_${subjectToken('jobs')}`);
    release();
    await bus.publish('jobs', 2);
    // Noticed by the missed heartbeats of the pull that went to the deleted consumer (about
    // 4 s); with the library's default heartbeat (half the 10 s expiry) it took 15 s.
    await waitFor(() => seen.includes(2), 12_000, 'delivery after the consumer was recreated');
    await sub.stop();
    // The first job's ack went to the deleted consumer: the new one delivers it again.
    assert.equal(seen, [1, 1, 2]);
    assert.match(String((group.errors[0] as Error | undefined)?.cause), /heartbeats missed/);
  } finally {
    await group.cleanup();
  }
});

nats('a consumer deleted by an operator is created again', async () => {
  const names = namespace('recreate');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const { seen, sub } = collect<number>(bus, 'jobs');
    await bus.publish('jobs', 1);
    // Acked first: an ack sent to the deleted consumer would bring the message back.
    await waitFor(async () => seen.length === 1 && (await bus.pending('jobs')) === 0, 3000, 'the first job acked');
    await admin.jsm.consumers.delete(names.stream, `q_${subjectToken('jobs')}`);
    await bus.publish('jobs', 2);
    await waitFor(() => seen.length === 2, 15_000, 'delivery after the consumer was recreated');
    await sub.stop();
    assert.equal(seen.map((x) => x.message.payload), [1, 2]);
    assert.ok(group.errors.length > 0, 'the loss was reported through onError');
  } finally {
    await group.cleanup();
  }
});

nats('a running consumer receives messages published before and after a nats-server restart', async () => {
  const group = replicas(namespace('restart'));
  let release!: () => void;
  const restartDone = new Promise<void>((resolve) => (release = resolve));
  try {
    const bus = await group.open();
    const { seen, sub } = collect<string>(bus, 'jobs');
    // A handler busy across the restart: its ack, after the reconnection, is its only delivery's.
    const busy: number[] = [];
    let acked = false;
    const busySub = bus.consume<string>(
      'busy',
      async (message) => {
        busy.push(message.attempt);
        await restartDone;
        await message.ack();
        acked = true;
      },
      { ackWaitMs: 5_000 },
    );
    await bus.publish('busy', 'across');
    await bus.publish('jobs', 'before');
    await waitFor(() => seen.length === 1 && busy.length === 1, 3000, 'the first message, and the busy one');
    // Cleanup talks to the server through the admin connection: it must be back first.
    const adminBack = (async () => {
      for await (const status of admin.nc.status()) if (status.type === 'reconnect') return;
    })();
    await server.restart({ downMs: 300 });
    release();
    const restarted = Date.now();
    await bus.publish('jobs', 'after');
    await waitFor(() => seen.length === 2, 20_000, 'the message published after the restart');
    // Not after a lost request's timeout: the bus waits for the reconnection instead.
    assert.ok(seen[1].at - restarted < 1_500, `delivered ${seen[1].at - restarted} ms after the restart`);
    await adminBack;
    await sub.stop();
    assert.equal(seen.map((x) => x.message.payload), ['before', 'after']);
    assert.ok(group.errors.length > 0, 'the interruption was reported through onError');
    await waitFor(() => acked, 5_000, 'the busy handler acked after the restart');
    await busIdle(bus, ['busy'], () => busy.length, 1_000);
    await busySub.stop();
    assert.equal(busy, [1], 'handled once: the ack after the reconnection settled it');
  } finally {
    release(); // a failed assertion must not leave the cleanup waiting on a handler
    await group.cleanup();
  }
});

nats('after a kill -9 of nats-server, pending and queued count only what is still to do, and nothing waiting is stranded', async () => {
  const group = replicas(namespace('killed'));
  try {
    const bus = await group.open();
    const { seen, sub } = collect<number>(bus, 'jobs');
    // Published as a busy proxy does, each due shortly after: the scheduler acks the due
    // ones while later ones wait, removals from the middle of the delay stream that a
    // killed 2.9 server has not yet written down.
    const published: number[] = [];
    for (let i = 0; i < 15; i++) {
      await bus.publish('jobs', i, { notBefore: Date.now() + 300 });
      published.push(i);
      await sleep(70);
    }
    assert.ok(seen.length > 0 && seen.length < published.length, `some done, some waiting when killed (${seen.length} done)`);
    const adminBack = (async () => {
      for await (const status of admin.nc.status()) if (status.type === 'reconnect') return;
    })();
    await server.restart({ kill: true, downMs: 300 });
    await adminBack;
    await waitFor(() => new Set(seen.map((x) => x.message.payload)).size === published.length, 20_000, 'every message delivered');
    // Idle: everything was delivered and acked, so the bus holds nothing.
    await waitFor(async () => (await bus.pending('jobs')) === 0, 10_000, 'nothing pending');
    assert.equal(await bus.queued('jobs'), []);
    await sub.stop();
  } finally {
    await group.cleanup();
  }
});

nats('after a kill -9, messages acked while an earlier one still waited are removed once it is done', async () => {
  const group = replicas(namespace('killed-order'));
  try {
    const bus = await group.open();
    const { seen, sub } = collect<string>(bus, 'jobs');
    // The first waits 4 s: the scheduler's ack floor stays below it while the later ones,
    // due at once, are acked above it, out of order.
    await bus.publish('jobs', 'late', { notBefore: Date.now() + 4_000 });
    for (let i = 0; i < 6; i++) await bus.publish('jobs', `early-${i}`, { notBefore: Date.now() + 50 });
    await waitFor(() => seen.length === 6, 5_000, 'the early ones delivered');
    const adminBack = (async () => {
      for await (const status of admin.nc.status()) if (status.type === 'reconnect') return;
    })();
    await server.restart({ kill: true, downMs: 300 });
    await adminBack;
    await waitFor(() => seen.some((x) => x.message.payload === 'late'), 20_000, 'the late one delivered');
    // The early ones a killed server brought back lie above the floor until the late one is acked: then they go.
    await waitFor(async () => (await bus.pending('jobs')) === 0, 15_000, 'nothing pending');
    assert.equal(await bus.queued('jobs'), []);
    assert.is(new Set(seen.map((x) => x.message.payload)).size, 7);
    await sub.stop();
  } finally {
    await group.cleanup();
  }
});

nats('after a kill -9, messages acked while one waits for a day are removed at once, not a day later', async () => {
  const names = namespace('killed-day');
  const group = replicas(names);
  try {
    const bus = await group.open();
    const { seen } = collect<string>(bus, 'jobs');
    // Deferred to tomorrow (a spent daily budget): the scheduler's ack floor stays below
    // it for a day, and every message acked after it is acked above the floor.
    await bus.publish('jobs', 'tomorrow', { notBefore: Date.now() + 24 * 60 * 60 * 1000 });
    for (let i = 0; i < 6; i++) await bus.publish('jobs', `now-${i}`, { notBefore: Date.now() + 50 });
    await waitFor(() => seen.length === 6, 5_000, 'the due ones delivered');
    const scheduler = () => admin.jsm.consumers.info(`${names.stream}_DELAY`, 'scheduler');
    await waitFor(async () => (await scheduler()).num_ack_pending === 1, 5_000, 'the due ones acked, the deferred one pending');
    // Engram goes first, so nothing sweeps before the server's state is looked at.
    await group.crash(bus);
    // 2.9 writes a consumer's acks within a second, the removals from the middle of the
    // stream's block some seconds after it was last used: killed in between.
    await sleep(1_500);
    const adminBack = (async () => {
      for await (const status of admin.nc.status()) if (status.type === 'reconnect') return;
    })();
    await server.restart({ kill: true, downMs: 300 });
    await adminBack;
    const brought = await admin.jsm.streams.info(`${names.stream}_DELAY`);
    const consumer = await scheduler();
    assert.equal(
      [brought.state.messages, consumer.num_ack_pending, consumer.delivered.stream_seq, consumer.ack_floor.stream_seq],
      [7, 1, 7, 0],
      'the killed server brought the acked messages back, with their acks kept and the floor below them',
    );
    const reopened = await group.open();
    // Idle: the bus holds the deferred message alone, as before the kill.
    await waitFor(async () => (await reopened.pending('jobs')) === 1, 10_000, 'the done ones removed while the deferred one waits');
    const queued = await reopened.queued('jobs');
    assert.equal(queued.map((message) => [message.payload, message.state]), [['tomorrow', 'waiting']]);
  } finally {
    await group.cleanup();
  }
});

nats('close stops consumers and the scheduler, and leaves the connection open', async () => {
  const names = namespace('close');
  const connection = await connectNats({ url: server.url });
  try {
    const bus = await NatsEventBus.open(connection, names);
    let finished = false;
    await bus.publish('s', 'x');
    bus.consume('s', async (message) => {
      await sleep(200);
      finished = true;
      await message.ack();
    });
    await bus.publish('s', 'later', { notBefore: Date.now() + 60_000 });
    await sleep(50);
    await bus.close();
    assert.ok(finished, 'close waited for the running handler');
    assert.not.ok(connection.nc.isClosed(), 'the shared connection stays open');
    await rejects(() => bus.publish('s', 'y'), /closed/);
    assert.throws(() => bus.consume('s', async () => {}), /closed/);
    const reopened = await NatsEventBus.open(connection, names);
    assert.is(await reopened.pending('s'), 1, 'only the delayed message is left');
    await reopened.close();
  } finally {
    await connection.close();
    await dropStreams(names.stream);
  }
});

nats.after(async () => {
  await admin.close();
  await server.cleanup();
});

nats.run();
