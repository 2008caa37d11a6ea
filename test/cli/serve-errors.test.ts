/**
 * Issue 14: `engram serve` failures a user can act on. A taken port names the port and
 * how to choose another, without a stack trace; a bad value blames where it was written
 * (`--port`, `ENGRAM_PORT` or the config file), not always the variable.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'engram-serve-errors-'));
}

test('a port already taken: one line naming the port and --port / ENGRAM_PORT, no stack', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  const cwd = tempDir();
  try {
    const run = await runCli(['serve', '--port', String(port), '--host', '127.0.0.1', '--log-level', 'warn', '--data-dir', path.join(cwd, 'data')], { cwd, env: cleanEnv() });
    assert.is(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`engram: Port ${port} on 127\\.0\\.0\\.1 is already in use.*--port N or ENGRAM_PORT=N`));
    assert.not.match(run.stderr, /\n\s+at /, 'no stack trace');
    assert.not.match(run.stderr, /unexpected error/);
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

test('--port abc blames the flag; ENGRAM_PORT=abc the variable; a config file value the file', async () => {
  const cwd = tempDir();
  try {
    const flag = await runCli(['serve', '--port', 'abc', '--data-dir', cwd], { cwd, env: cleanEnv() });
    assert.is(flag.code, 2);
    assert.match(flag.stderr, /engram: --port must be an integer >= 0, got "abc"/);
    const variable = await runCli(['serve', '--data-dir', cwd], { cwd, env: cleanEnv({ ENGRAM_PORT: 'abc' }) });
    assert.is(variable.code, 2);
    assert.match(variable.stderr, /engram: ENGRAM_PORT must be an integer/);
    const file = path.join(cwd, 'engram.toml');
    fs.writeFileSync(file, 'port = "abc"\n');
    const fromFile = await runCli(['serve', '--config', file], { cwd, env: cleanEnv() });
    assert.is(fromFile.code, 2);
    assert.ok(fromFile.stderr.includes(`"port" in ${file} must be an integer`), fromFile.stderr);
    const bool = await runCli(['serve', '--upstream-allow-private', 'maybe', '--data-dir', cwd], { cwd, env: cleanEnv() });
    assert.match(bool.stderr, /--upstream-allow-private must be true or false/);
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

test('a port out of range, or a client command given a bad --port, blames the flag', async () => {
  const cwd = tempDir();
  try {
    const serve = await runCli(['serve', '--port', '70000', '--data-dir', cwd], { cwd, env: cleanEnv() });
    assert.is(serve.code, 2, serve.stderr);
    assert.match(serve.stderr, /engram: --port must be a port number \(0-65535\), got 70000/);
    assert.not.match(serve.stderr, /\n\s+at /, 'no stack trace');
    const client = await runCli(['org', 'list', '--port', 'abc'], { cwd, env: cleanEnv() });
    assert.is(client.code, 2);
    assert.match(client.stderr, /engram: --port must be a port number \(0-65535\), got "abc"/);
    const variable = await runCli(['org', 'list'], { cwd, env: cleanEnv({ ENGRAM_PORT: 'abc' }) });
    assert.match(variable.stderr, /engram: ENGRAM_PORT must be a port number/);
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

test.run();
