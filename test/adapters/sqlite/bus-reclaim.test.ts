/**
 * Crash recovery of the embedded bus: a lease names the process start that holds it, and
 * a bus that starts consuming makes due at once the leases a dead process on this host
 * held, instead of leaving them until their ack wait (minutes) runs out. Leases of a live
 * process, or of another host, are left alone.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BusQueue, type LeaseHolder } from '../../../src/adapters/sqlite/bus-queue.js';
import { PROCESS_HOLDER, SqliteEventBus } from '../../../src/adapters/sqlite/event-bus.js';
import { openDatabase } from '../../../src/adapters/sqlite/database.js';
import { waitFor } from '../../contracts/helpers.js';
import { tempDb, type TempDb } from './helpers.js';

const ACK_WAIT_MS = 120_000;
const test = suite<{ temp: TempDb; others: Array<{ kill(): void }> }>('sqlite bus: reclaiming dead leases', {
  temp: undefined as never,
  others: [],
});

test.before.each((context) => {
  context.temp = tempDb();
  context.others = [];
});
test.after.each((context) => {
  for (const other of context.others) other.kill();
  context.temp.remove();
});

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** A live process other than this one, killed after the test. */
function livePid(context: { others: Array<{ kill(): void }> }): number {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], { stdio: 'ignore' });
  context.others.push(child);
  return child.pid!;
}

/** Leases the one message on `subject` for `holder`, as that process's consumer would have. */
function leaseAs(temp: TempDb, subject: string, holder: LeaseHolder): void {
  const leased = new BusQueue(temp.db).lease(subject, 1, Date.now(), ACK_WAIT_MS, 5, holder);
  assert.is(leased.length, 1);
}

function dueAt(temp: TempDb, subject: string): number {
  return (temp.db.prepare('SELECT due_at FROM bus_messages WHERE subject = ?').get(subject) as { due_at: number }).due_at;
}

test('a lease held by a dead process on this host is delivered again at once, its attempt counted', async ({ temp }) => {
  const bus = new SqliteEventBus(temp.db);
  await bus.publish('jobs', { n: 1 });
  leaseAs(temp, 'jobs', { id: 'crashed-start', pid: await deadPid(), host: os.hostname() });
  let reclaimed = 0;
  const restarted = new SqliteEventBus(openDatabase(temp.file), { onReclaim: (count) => (reclaimed = count) });
  const attempts: number[] = [];
  const started = Date.now();
  const sub = restarted.consume<{ n: number }>('jobs', async (message) => {
    attempts.push(message.attempt);
    await message.ack();
  }, { ackWaitMs: ACK_WAIT_MS });
  await waitFor(() => attempts.length === 1, 5000, 'the redelivery');
  const took = Date.now() - started;
  await sub.stop();
  await restarted.close();
  await bus.close();
  assert.is(reclaimed, 1);
  assert.equal(attempts, [2], 'the crashed delivery counts as an attempt');
  assert.ok(took < 2000, `redelivered after ${took} ms`);
});

test('the same pid under another process start is a restart that reused the pid: reclaimed', async ({ temp }) => {
  const bus = new SqliteEventBus(temp.db);
  await bus.publish('jobs', 1);
  leaseAs(temp, 'jobs', { id: 'previous-start', pid: process.pid, host: os.hostname() });
  const before = dueAt(temp, 'jobs');
  // Another subject's consumer: the reclaimed message stays unleased for the look below.
  bus.consume('unrelated', async () => undefined);
  assert.ok(before > Date.now() + 60_000);
  assert.ok(dueAt(temp, 'jobs') <= Date.now(), 'due now');
  await bus.close();
});

test('leases of a live process, of another host, and of this process start are left to their ack wait', async (context) => {
  const { temp } = context;
  const bus = new SqliteEventBus(temp.db);
  await bus.publish('live', 1);
  await bus.publish('remote', 2);
  await bus.publish('self', 3);
  leaseAs(temp, 'live', { id: 'live-start', pid: livePid(context), host: os.hostname() });
  leaseAs(temp, 'remote', { id: 'remote-start', pid: await deadPid(), host: `not-${os.hostname()}` });
  leaseAs(temp, 'self', PROCESS_HOLDER);
  const before = ['live', 'remote', 'self'].map((subject) => dueAt(temp, subject));
  let reclaimed = 0;
  const other = new SqliteEventBus(openDatabase(temp.file), { onReclaim: (count) => (reclaimed = count) });
  // Reclaiming happens when the first consumer starts, synchronously.
  other.consume('unrelated', async () => undefined);
  assert.equal(['live', 'remote', 'self'].map((subject) => dueAt(temp, subject)), before);
  assert.is(reclaimed, 0);
  await other.close();
  await bus.close();
});

test('a nak releases the lease: a message waiting out its backoff is not made due by a restart', async ({ temp }) => {
  const bus = new SqliteEventBus(temp.db, { maxPollMs: 20 });
  await bus.publish('jobs', 1);
  let naked = false;
  const sub = bus.consume('jobs', async (message) => {
    await message.nak({ delayMs: 60_000 });
    naked = true;
  });
  await waitFor(() => naked, 3000, 'the nak');
  await sub.stop();
  const row = temp.db.prepare('SELECT lease_owner, due_at FROM bus_messages').get() as { lease_owner: string | null; due_at: number };
  assert.is(row.lease_owner, null);
  assert.ok(row.due_at > Date.now() + 50_000);
  await bus.close();
});

test('a heartbeat keeps the lease with its holder', async ({ temp }) => {
  const bus = new SqliteEventBus(temp.db, { maxPollMs: 20 });
  await bus.publish('jobs', 1);
  let beat = false;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const sub = bus.consume('jobs', async (message) => {
    await message.working();
    beat = true;
    await released;
    await message.ack();
  }, { ackWaitMs: ACK_WAIT_MS });
  await waitFor(() => beat, 3000, 'the heartbeat');
  const row = temp.db.prepare('SELECT lease_owner, lease_pid FROM bus_messages').get() as { lease_owner: string; lease_pid: number };
  assert.equal(row, { lease_owner: PROCESS_HOLDER.id, lease_pid: process.pid });
  release();
  await sub.stop();
  await bus.close();
});

test.run();
