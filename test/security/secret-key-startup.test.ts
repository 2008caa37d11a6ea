/**
 * A data dir restored without its `secret-key` (or started with another key) used to start
 * with a new key and answer every proxied request with a 500. Now the server refuses to
 * start, in one line naming the key file and ENGRAM_SECRET_KEY, and generates no key over
 * sealed data. Real SQLite files, a real nats-server, real `engram serve` processes.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { StartupError } from '../../src/errors.js';
import { serveUntilExitOrListening } from '../support/cli.js';
import { startEngram } from '../support/engram.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

interface Context {
  dir: string;
  /** A data dir with one agent, its upstream key sealed with its own secret-key. */
  sealed: string;
}
const test = suite<Context>('the secret key at start-up');

test.before(async (context) => {
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-keycheck-'));
  context.sealed = path.join(context.dir, 'sealed');
  const engram = await startEngram({}, context.sealed);
  await engram.createAgent('http://127.0.0.1:9', { org: 'acme', name: 'bot' });
  await engram.close();
});
test.after(({ dir }) => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the sealed data dir, as a restore would make it. */
function restored(context: Context, name: string, options: { withKey: boolean }): string {
  const target = path.join(context.dir, name);
  cpSync(context.sealed, target, { recursive: true, filter: (source) => options.withKey || path.basename(source) !== 'secret-key' });
  return target;
}

const refusal = (run: Promise<{ close(): Promise<void> }>) =>
  run.then(
    async (started) => {
      await started.close();
      throw new Error('started: expected a refusal');
    },
    (error: unknown) => error as Error,
  );

test('restored without secret-key: refused, naming the key file and ENGRAM_SECRET_KEY; no new key is generated', async (context) => {
  const dir = restored(context, 'no-key', { withKey: false });
  const error = await refusal(startEngram({}, dir));
  assert.instance(error, StartupError);
  assert.match(error.message, path.join(dir, 'secret-key'));
  assert.match(error.message, 'ENGRAM_SECRET_KEY');
  assert.match(error.message, 'agent "bot" of org "acme"');
  assert.not.ok(existsSync(path.join(dir, 'secret-key')), 'no key generated over sealed data');

  // Putting the key back is the fix the message names.
  cpSync(path.join(context.sealed, 'secret-key'), path.join(dir, 'secret-key'));
  const engram = await startEngram({}, dir);
  try {
    const agents = await engram.api('GET', `/v0/orgs/acme/agents`);
    assert.is(agents.json.data[0].name, 'bot');
  } finally {
    await engram.close();
  }
});

test('another key in the key file, or in ENGRAM_SECRET_KEY: refused, naming where the key came from', async (context) => {
  const dir = restored(context, 'other-key', { withKey: false });
  writeFileSync(path.join(dir, 'secret-key'), 'ab'.repeat(32) + '\n', { mode: 0o600 });
  const fromFile = await refusal(startEngram({}, dir));
  assert.instance(fromFile, StartupError);
  assert.match(fromFile.message, `Wrong secret key: the key from ${path.join(dir, 'secret-key')} does not open`);
  assert.match(fromFile.message, 'ENGRAM_SECRET_KEY');

  const configured = await refusal(startEngram({ 'secret-key': 'cd'.repeat(32) }, restored(context, 'configured-key', { withKey: true })));
  assert.instance(configured, StartupError);
  assert.match(configured.message, 'Wrong secret key: the key from ENGRAM_SECRET_KEY does not open');
});

test('engram serve prints the refusal as one line and exits 1, no stack', async (context) => {
  const dir = restored(context, 'serve-no-key', { withKey: false });
  const run = await serveUntilExitOrListening(['serve', '--port', '0', '--data-dir', dir]);
  assert.is(run.code, 1, run.stderr);
  const lines = run.stderr.trim().split('\n');
  assert.is(lines.length, 1, run.stderr);
  assert.match(lines[0], /^engram: No secret key: /);
  assert.match(lines[0], path.join(dir, 'secret-key'));
  assert.not.match(run.stderr, '    at ');
});

test('a fresh data dir still gets a generated key', async (context) => {
  const dir = path.join(context.dir, 'fresh');
  const engram = await startEngram({}, dir);
  await engram.close();
  assert.match(readFileSync(path.join(dir, 'secret-key'), 'utf8'), /^[0-9a-f]{64}\n$/);
});

const nats = suite<{ nats: NatsServer; dir: string }>('the secret key at start-up, on NATS');
nats.before(async (context) => {
  context.nats = await startNatsServer();
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-keycheck-nats-'));
});
nats.after(async ({ nats: server, dir }) => {
  await server?.cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

nats('the check goes through the stores: a replica with another key is refused on NATS too', async (context) => {
  const settings = { 'nats-url': context.nats.url, 'nats-prefix': 'keycheck' };
  const first = await startEngram({ ...settings, 'secret-key': '12'.repeat(32) }, path.join(context.dir, 'a'));
  try {
    await first.createAgent('http://127.0.0.1:9', { org: 'acme', name: 'bot' });
    const error = await refusal(startEngram({ ...settings, 'secret-key': '34'.repeat(32) }, path.join(context.dir, 'b')));
    assert.instance(error, StartupError);
    assert.match(error.message, /Wrong secret key: the key from ENGRAM_SECRET_KEY does not open the upstream keys sealed in the control store \(nats /);
    const missing = await refusal(startEngram(settings, path.join(context.dir, 'c')));
    assert.match(missing.message, `No secret key: ${path.join(context.dir, 'c', 'secret-key')} is missing`);
    assert.not.ok(existsSync(path.join(context.dir, 'c', 'secret-key')));
  } finally {
    await first.close();
  }
});

test.run();
nats.run();
