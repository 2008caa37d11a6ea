/**
 * One server per data dir: a second `engram serve` on the same embedded store is refused
 * with a message naming the dir and the pid holding it; the lock goes with its holder,
 * on close and on `kill -9`. The archive commands may still run beside a server, and
 * replicas on NATS still share a dir. Real processes, the real SQLite files.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DataDirLockedError, LOCK_FILE, lockDataDir } from '../../src/adapters/sqlite/data-dir-lock.js';
import { StartupError } from '../../src/errors.js';
import { runCli, serveUntilExitOrListening } from '../support/cli.js';
import { ADMIN_TOKEN, startEngram } from '../support/engram.js';
import { serveProcess } from '../support/engram-process.js';
import { startNatsServer } from '../support/nats-server.js';

test('a second server on the same data dir is refused, naming the dir and the pid; after a kill -9 the dir is free again', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-lock-'));
  let first = await serveProcess({ ENGRAM_DATA_DIR: dataDir });
  try {
    const second = await serveUntilExitOrListening(['serve', '--port', '0', '--data-dir', dataDir, '--admin-token', ADMIN_TOKEN]);
    assert.is(second.code, 1, second.stderr);
    const lines = second.stderr.trim().split('\n');
    assert.is(lines.length, 1, second.stderr);
    assert.match(lines[0], `engram: Another Engram (pid ${first.child.pid}, since `);
    assert.match(lines[0], `is using the data dir ${dataDir}:`);
    assert.not.match(second.stderr, '    at ');

    // `engram export` reads the stores beside a running server, as docs/operations.md promises.
    const exported = await runCli(['export', '--data-dir', dataDir, '--admin-token', ADMIN_TOKEN]);
    assert.is(exported.code, 0, exported.stderr);

    await first.crash();
    first = await serveProcess({ ENGRAM_DATA_DIR: dataDir });
  } finally {
    await first.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('in one process too: refused while the first runs, free once it closed', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-lock-'));
  const first = await startEngram({}, dataDir);
  try {
    const error = await startEngram({}, dataDir).then(
      async (second) => {
        await second.close();
        throw new Error('the second server started');
      },
      (refused: unknown) => refused as Error,
    );
    assert.instance(error, StartupError);
    assert.match(error.message, `Another Engram (pid ${process.pid}, since `);
    assert.match(error.message, dataDir);
  } finally {
    await first.close();
  }
  const again = await startEngram({}, dataDir);
  await again.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('a lock file that cannot be used stops the start in one line naming it', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-lock-'));
  writeFileSync(path.join(dataDir, 'engram.lock'), 'not a lock file, and long enough to be read as a database header........................................\n');
  try {
    const error = await startEngram({}, dataDir).then(
      async (started) => {
        await started.close();
        throw new Error('started beside an unusable lock file');
      },
      (refused: unknown) => refused as Error,
    );
    assert.instance(error, StartupError);
    assert.match(error.message, `Cannot lock the data dir ${dataDir} (${path.join(dataDir, 'engram.lock')}): file is not a database`);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a failed start removes the lock file while holding it: whoever opened that file before cannot take it, and locks a new one', async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-lock-removed-'));
  const file = path.join(dataDir, LOCK_FILE);
  try {
    const failing = lockDataDir(dataDir);
    // A second start opened the file a moment before the failed one removed it.
    const early = new BetterSqlite3(file, { timeout: 0 });
    rmSync(file);
    failing.release();
    // SQLite refuses its write once the lock is free: the file was removed since it was opened.
    assert.throws(() => {
      early.exec('BEGIN IMMEDIATE');
      early.prepare('INSERT OR REPLACE INTO holder (id, pid, host, since) VALUES (1, 1, ?, ?)').run('h', 'now');
    }, /readonly/);
    early.close();
    const next = lockDataDir(dataDir);
    assert.ok(existsSync(file), 'the next lock is on a new file');
    assert.throws(() => lockDataDir(dataDir), (error: Error) => error instanceof DataDirLockedError);
    next.release();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('replicas on NATS share a data dir by design: no lock', async () => {
  const nats = await startNatsServer();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'engram-lock-nats-'));
  const settings = { 'nats-url': nats.url, 'nats-prefix': 'lock', 'secret-key': 'ab'.repeat(32) };
  const a = await startEngram(settings, dataDir);
  try {
    const b = await startEngram(settings, dataDir);
    await b.close();
  } finally {
    await a.close();
    await nats.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test.run();
