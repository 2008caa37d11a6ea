import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import BetterSqlite3 from 'better-sqlite3';
import { migrate, openDatabase } from '../../../src/adapters/sqlite/database.js';
import { SqliteEventBus } from '../../../src/adapters/sqlite/event-bus.js';
import { DEFAULT_CONSUMER_OPTIONS } from '../../../src/ports/index.js';
import { eventBusContract } from '../../contracts/event-bus.contract.js';
import { sleep, waitFor } from '../../contracts/helpers.js';
import { tempDb } from './helpers.js';

eventBusContract('sqlite (file)', async () => {
  const temp = tempDb();
  let bus = new SqliteEventBus(temp.db);
  return {
    bus,
    reopen: async () => {
      await bus.close();
      bus = new SqliteEventBus(temp.reopen());
      return bus;
    },
    cleanup: async () => {
      await bus.close();
      temp.remove();
    },
  };
});

const sqlite = suite('SqliteEventBus specifics');

sqlite('default consumer options', () => {
  assert.is(DEFAULT_CONSUMER_OPTIONS.ackWaitMs, 30_000);
  assert.is(DEFAULT_CONSUMER_OPTIONS.maxDeliver, 5);
  assert.is(DEFAULT_CONSUMER_OPTIONS.concurrency, 1);
  assert.equal([1, 2, 3, 7, 8, 20].map(DEFAULT_CONSUMER_OPTIONS.backoffMs), [1000, 2000, 4000, 60_000, 60_000, 60_000]);
});

sqlite('supersedes removes the waiting message of its key at once; a due or leased one stays', async () => {
  const temp = tempDb();
  const bus = new SqliteEventBus(temp.db, { maxPollMs: 20 });
  try {
    const later = Date.now() + 60_000;
    await bus.publish('jobs', 'conv-1 turn 1', { notBefore: later, supersedes: 'conv-1' });
    await bus.publish('jobs', 'conv-1 turn 2', { notBefore: later, supersedes: 'conv-1' });
    await bus.publish('jobs', 'conv-2 now', { supersedes: 'conv-2' });
    const seen: string[] = [];
    const sub = bus.consume<string>('jobs', async (message) => {
      seen.push(message.payload);
      await sleep(200);
      await message.ack();
    });
    await waitFor(() => seen.length === 1, 3000, 'the due one delivered');
    // Leased now: a newer message of its key does not take it away.
    await bus.publish('jobs', 'conv-2 later', { notBefore: later, supersedes: 'conv-2' });
    assert.equal((await bus.queued('jobs')).map((message) => message.payload).sort(), ['conv-1 turn 2', 'conv-2 later', 'conv-2 now']);
    await waitFor(async () => (await bus.pending('jobs')) === 2, 3000, 'the leased one acked');
    await sub.stop();
    assert.equal(seen, ['conv-2 now']);
  } finally {
    await bus.close();
    temp.remove();
  }
});

sqlite('two buses on one file (two processes) never deliver one message twice', async () => {
  const temp = tempDb();
  const other = openDatabase(temp.file);
  const busA = new SqliteEventBus(temp.db, { maxPollMs: 20 });
  const busB = new SqliteEventBus(other, { maxPollMs: 20 });
  try {
    for (let i = 0; i < 40; i++) await busA.publish('jobs', i);
    const seen: number[] = [];
    const handler = async (message: { payload: number; ack(): Promise<void> }): Promise<void> => {
      seen.push(message.payload);
      await sleep(1);
      await message.ack();
    };
    const subA = busA.consume<number>('jobs', handler, { concurrency: 3 });
    const subB = busB.consume<number>('jobs', handler, { concurrency: 3 });
    await waitFor(() => seen.length >= 40, 5000, 'all jobs');
    // Idle: every message acked (an acked message is gone, so none can come again), and the
    // handlers still running finished by stop.
    await waitFor(async () => (await busA.pending('jobs')) === 0, 5000, 'nothing pending');
    await Promise.all([subA.stop(), subB.stop()]);
    assert.is(seen.length, 40);
    assert.equal([...seen].sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i));
  } finally {
    await busA.close();
    await busB.close();
    other.close();
    temp.remove();
  }
});

sqlite('a publish from another connection is seen within the poll interval', async () => {
  const temp = tempDb();
  const other = openDatabase(temp.file);
  const consumerBus = new SqliteEventBus(temp.db, { maxPollMs: 50 });
  const publisherBus = new SqliteEventBus(other);
  try {
    const seen: string[] = [];
    const sub = consumerBus.consume<string>('s', async (message) => {
      seen.push(message.payload);
      await message.ack();
    });
    await sleep(30);
    await publisherBus.publish('s', 'from elsewhere');
    await waitFor(() => seen.length === 1, 2000);
    await sub.stop();
  } finally {
    await consumerBus.close();
    await publisherBus.close();
    other.close();
    temp.remove();
  }
});

sqlite('a publish due later only re-arms the consumer: no lease transaction until something is due', async () => {
  const statements: string[] = [];
  const db = new BetterSqlite3(':memory:', { verbose: (sql) => statements.push(String(sql)) });
  migrate(db);
  const bus = new SqliteEventBus(db, { maxPollMs: 40 });
  try {
    const seen: number[] = [];
    const sub = bus.consume<string>('s', async (message) => {
      seen.push(Date.now());
      await message.ack();
    });
    await sleep(20);
    const publishedAt = Date.now();
    await bus.publish('s', 'later', { notBefore: publishedAt + 250 });
    statements.length = 0;
    await sleep(150); // a wake-up on publish and a few polls
    const leases = (): string[] => statements.filter((sql) => /^BEGIN|UPDATE bus_messages/i.test(sql.trim()));
    assert.equal(leases(), [], 'nothing was due: no write transaction');
    assert.ok(statements.some((sql) => /MIN\(due_at\)/.test(sql)), 'polls are one indexed read');
    await waitFor(() => seen.length === 1, 3000, 'delivery when due');
    assert.ok(seen[0] >= publishedAt + 250, 'not before notBefore');
    assert.ok(leases().length > 0, 'leased once due');
    await sub.stop();
  } finally {
    await bus.close();
    db.close();
  }
});

sqlite('a publish due before the consumer next wakes is delivered on time', async () => {
  const db = openDatabase(':memory:');
  const bus = new SqliteEventBus(db, { maxPollMs: 10_000 });
  try {
    const seen: number[] = [];
    const sub = bus.consume<string>('s', async (message) => {
      seen.push(Date.now());
      await message.ack();
    });
    await sleep(20); // asleep until the 10 s poll
    const notBefore = Date.now() + 100;
    await bus.publish('s', 'soon', { notBefore });
    await bus.publish('s', 'much later', { notBefore: notBefore + 60_000 });
    await waitFor(() => seen.length === 1, 2000, 'delivery within 2 s, not at the 10 s poll');
    assert.ok(seen[0] >= notBefore);
    await sub.stop();
  } finally {
    await bus.close();
    db.close();
  }
});

sqlite('a stale nak after redelivery does not disturb the newer delivery', async () => {
  const db = openDatabase(':memory:');
  const bus = new SqliteEventBus(db);
  await bus.publish('s', 'x');
  const attempts: number[] = [];
  let staleNak: (() => Promise<void>) | undefined;
  const sub = bus.consume<string>(
    's',
    async (message) => {
      attempts.push(message.attempt);
      if (message.attempt === 1) {
        staleNak = () => message.nak({ delayMs: 0 });
        return; // never settled: redelivered after ackWait
      }
      await staleNak?.(); // the first delivery's late nak must be ignored
      await sleep(50);
      await message.ack();
    },
    { ackWaitMs: 80, concurrency: 2 },
  );
  await waitFor(() => attempts.length >= 2);
  // Idle: the message acked and gone, so no delivery can follow; stop waits for a handler still running.
  await waitFor(async () => (await bus.pending('s')) === 0, 5000, 'nothing pending');
  await sub.stop();
  assert.equal(attempts, [1, 2]);
  assert.is(await bus.pending('s'), 0);
  await bus.close();
  db.close();
});

sqlite('msgId can be reused once the first message is gone', async () => {
  const db = openDatabase(':memory:');
  const bus = new SqliteEventBus(db);
  await bus.publish('s', 1, { msgId: 'same' });
  const seen: number[] = [];
  const sub = bus.consume<number>('s', async (message) => {
    seen.push(message.payload);
    await message.ack();
  });
  await waitFor(() => seen.length === 1);
  await bus.publish('s', 2, { msgId: 'same' });
  await waitFor(() => seen.length === 2);
  await sub.stop();
  await bus.publish('other', 3, { msgId: 'same' });
  assert.is(await bus.pending('other'), 1, 'dedupe is per subject');
  await bus.close();
  db.close();
});

sqlite('after close, publish and consume reject; the shared handle stays open', async () => {
  const db = openDatabase(':memory:');
  const bus = new SqliteEventBus(db);
  await bus.close();
  let threw = false;
  try {
    await bus.publish('s', 1);
  } catch {
    threw = true;
  }
  assert.ok(threw);
  assert.throws(() => bus.consume('s', async () => {}));
  assert.ok(db.open);
  db.close();
});

sqlite.run();
