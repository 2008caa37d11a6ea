/**
 * Issue 23: a start that fails leaves nothing behind. A start refused because its port is
 * taken used to create the data dir anyway, with an admin token, a secret key and a
 * database no server ever used (and a later start adopted them). Now a fresh data dir
 * path does not exist after a failed start, an existing data dir gains no file, and none
 * of its files is removed. Real `engram serve` processes (the entry `npm start` runs),
 * real ports, the real SQLite files, a real nats-server.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';
import { startEngram } from '../support/engram.js';
import { startNatsServer } from '../support/nats-server.js';

interface Context {
  dir: string;
  /** A data dir a server used: one agent, its upstream key sealed with the dir's secret-key. */
  used: string;
  /** A listener holding a port, as another program would. */
  blocker: net.Server;
  port: number;
}
const test = suite<Context>('a failed start leaves nothing behind');

test.before(async (context) => {
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-failed-start-'));
  context.used = path.join(context.dir, 'used');
  const engram = await startEngram({}, context.used);
  await engram.createAgent('http://127.0.0.1:9', { org: 'acme', name: 'bot' });
  await engram.close();
  // As a server that generated its token leaves it.
  writeFileSync(path.join(context.used, 'admin-token'), 'egm_admin_' + 'x'.repeat(43) + '\n', { mode: 0o600 });
  context.blocker = net.createServer();
  await new Promise<void>((resolve) => context.blocker.listen(0, '127.0.0.1', resolve));
  context.port = (context.blocker.address() as net.AddressInfo).port;
});
test.after(async ({ dir, blocker }) => {
  if (blocker) await new Promise((resolve) => blocker.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the used data dir; `without` names files left out (a restore from a backup). */
function copyOfUsed(context: Context, name: string, without: string[] = []): string {
  const target = path.join(context.dir, name);
  cpSync(context.used, target, { recursive: true, filter: (source) => !without.includes(path.basename(source)) });
  return target;
}

/** Every file of a dir with its content: what a failed start must leave as it was. */
function contents(dir: string): Record<string, string> {
  return Object.fromEntries(
    readdirSync(dir)
      .sort()
      // The lock file records its last holder; the rest must not change at all.
      .map((name) => [name, name === 'engram.lock' ? '(lock)' : readFileSync(path.join(dir, name)).toString('base64')]),
  );
}

const serve = (args: string[]) => runCli(['serve', '--host', '127.0.0.1', '--log-level', 'warn', ...args], { env: cleanEnv({ HOME: tmpdir() }) });

test('port taken, fresh data dir path: exits 1 naming the port; neither the data dir nor its parent exists', async (context) => {
  const parent = path.join(context.dir, 'fresh');
  const dataDir = path.join(parent, 'data');
  const run = await serve(['--port', String(context.port), '--data-dir', dataDir]);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, `engram: Port ${context.port} on 127.0.0.1 is already in use`);
  assert.not.ok(existsSync(parent), `${parent} was left behind: ${existsSync(dataDir) ? readdirSync(dataDir).join(', ') : ''}`);
});

test('port taken, existing data dirs: an empty one stays empty; a used one keeps exactly its files', async (context) => {
  const empty = path.join(context.dir, 'empty');
  mkdirSync(empty);
  const intoEmpty = await serve(['--port', String(context.port), '--data-dir', empty]);
  assert.is(intoEmpty.code, 1, intoEmpty.stderr);
  assert.equal(readdirSync(empty), []);

  const used = copyOfUsed(context, 'used-port');
  const before = contents(used);
  const intoUsed = await serve(['--port', String(context.port), '--data-dir', used]);
  assert.is(intoUsed.code, 1, intoUsed.stderr);
  assert.match(intoUsed.stderr, `Port ${context.port} on 127.0.0.1 is already in use`);
  assert.equal(contents(used), before);
});

test('a data dir restored without its secret-key: refused after opening the stores; no admin token, key or lock file appears', async (context) => {
  const restored = copyOfUsed(context, 'restored', ['secret-key', 'admin-token', 'engram.lock']);
  assert.equal(readdirSync(restored), ['engram.db']);
  const run = await serve(['--port', '0', '--data-dir', restored]);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, path.join(restored, 'secret-key'));
  assert.equal(readdirSync(restored), ['engram.db']);
});

test('a wrong secret key for a used data dir: refused; every file stays, and no file appears', async (context) => {
  const used = copyOfUsed(context, 'used-wrong-key');
  const before = contents(used);
  const run = await serve(['--port', '0', '--data-dir', used, '--secret-key', 'cd'.repeat(32)]);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, 'Wrong secret key');
  assert.equal(contents(used), before);
});

test('Weaviate out of reach, fresh data dir path: the lock file and the folder this start made are taken back', async (context) => {
  const dataDir = path.join(context.dir, 'fresh-weaviate');
  const run = await serve(['--port', '0', '--data-dir', dataDir, '--weaviate-url', 'http://127.0.0.1:9']);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, 'Cannot use Weaviate');
  assert.not.ok(existsSync(dataDir), `${dataDir} was left behind`);
});

test('NATS out of reach, fresh data dir path (no lock on NATS): nothing is created before the stores answer', async (context) => {
  const dataDir = path.join(context.dir, 'fresh-nats');
  const run = await serve(['--port', '0', '--data-dir', dataDir, '--nats-url', 'nats://127.0.0.1:9']);
  assert.is(run.code, 1, run.stderr);
  assert.match(run.stderr, 'Cannot connect to NATS');
  assert.not.ok(existsSync(dataDir), `${dataDir} was left behind: ${existsSync(dataDir) ? readdirSync(dataDir).join(', ') : ''}`);
});

test('on NATS, a port taken: refused before the data dir is touched', async (context) => {
  const nats = await startNatsServer();
  try {
    const dataDir = path.join(context.dir, 'fresh-nats-port');
    const run = await serve(['--port', String(context.port), '--data-dir', dataDir, '--nats-url', nats.url, '--nats-prefix', 'failed']);
    assert.is(run.code, 1, run.stderr);
    assert.match(run.stderr, `Port ${context.port} on 127.0.0.1 is already in use`);
    assert.not.ok(existsSync(dataDir), `${dataDir} was left behind`);
  } finally {
    await nats.cleanup();
  }
});

test.run();
