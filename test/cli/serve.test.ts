/**
 * `engram serve` as a user starts it: generated admin token in the data dir, a client
 * command that finds the server and the token by itself, a clean stop on SIGTERM.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BIN, cleanEnv, runCli } from '../support/cli.js';

// HOME is a temp dir: the default data dir (~/.engram) never touches the real home.
const run = (args: string[], cwd: string, home: string) => runCli(args, { cwd, bin: true, env: cleanEnv({ HOME: home }) });

function listeningUrl(child: ChildProcessWithoutNullStreams, output: { text: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output.text}`)), 20_000);
    child.stderr.on('data', (chunk) => {
      output.text += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(output.text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.on('close', () => {
      clearTimeout(timer);
      reject(new Error(`serve exited:\n${output.text}`));
    });
  });
}

test('engram serve generates the admin token; the CLI finds it; SIGTERM stops it', async () => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-serve-'));
  const cwd = path.join(home, 'server-cwd');
  const elsewhere = path.join(home, 'client-cwd');
  fs.mkdirSync(cwd);
  fs.mkdirSync(elsewhere);
  const serve = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log-level', 'warn'], { cwd, env: cleanEnv({ HOME: home }) });
  const output = { text: '' };
  try {
    const url = await listeningUrl(serve, output);
    const tokenFile = path.join(home, '.engram', 'admin-token');
    assert.match(output.text, tokenFile);
    assert.is(fs.statSync(tokenFile).mode & 0o777, 0o600);
    assert.not.ok(output.text.includes(fs.readFileSync(tokenFile, 'utf8').trim()), 'the token itself is not printed');

    assert.match(output.text, `data dir ${path.join(home, '.engram')}`);
    // The first start says where a person signs up, at the address it listens on.
    assert.match(output.text, `Dashboard: ${url}/ (sign up at ${url}/signup)`);
    // Another working directory: the default data dir (~/.engram) is per user, so the CLI finds the token.
    const created = await run(['agent', 'create', '--org', 'served', '--name', 'a', '--upstream', 'https://api.openai.com', '--no-check', '--upstream-key', 'k', '--json', '--url', url], elsewhere, home);
    assert.is(created.code, 0, created.stderr);
    const json = JSON.parse(created.stdout);
    assert.ok(json.base_url.startsWith(`${url}/v0/orgs/${json.org_id}/agents/`));

    const exited = new Promise<number | null>((resolve) => serve.on('close', resolve));
    serve.kill('SIGTERM');
    assert.is(await exited, 0, output.text);
  } finally {
    if (serve.exitCode === null) serve.kill('SIGKILL');
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('a NATS that cannot be reached stops serve at once with a message naming it, never the password', async () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-serve-nats-'));
  try {
    const started = await runCli(['serve', '--port', '0', '--nats-url', 'nats://engram:hunter2-secret@127.0.0.1:9'], { cwd, bin: true, env: cleanEnv({ HOME: cwd }) });
    assert.is(started.code, 1);
    assert.match(started.stderr, 'Cannot connect to NATS at 127.0.0.1:9 (ENGRAM_NATS_URL)');
    assert.not.match(started.stderr, 'hunter2', 'the password in the URL is never printed');
    assert.not.match(started.stderr, '    at ', 'no stack trace');
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});

test.run();
