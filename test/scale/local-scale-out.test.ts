/**
 * The scale-out without Docker of docs/scale-out.md, run as written: a plain `nats-server -js`, two
 * `engram serve` processes on it sharing one data dir (under an isolated HOME), the agent
 * made with the CLI through the first, a conversation through the first with the real
 * openai SDK, and the reflection read with the CLI through the second, found again by the
 * conversation id the CLI prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { BIN, cleanEnv, runCli, type CliRun } from '../support/cli.js';
import { eventually } from '../support/engram.js';
import { natsServerBinary } from '../support/nats-server.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** Resolves with the first match of `pattern` in the child's stderr; rejects if it exits first. */
function waitFor(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start:\n${text}`)), 30_000);
    child.stderr!.on('data', (chunk) => {
      text += chunk;
      const match = pattern.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once('close', () => {
      clearTimeout(timer);
      reject(new Error(`${what} exited:\n${text}`));
    });
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const closed = new Promise((done) => child.once('close', done));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await closed;
  clearTimeout(killer);
}

test('nats-server -js and two engram serve: taught through one, the reflection read through the other', async () => {
  const binary = natsServerBinary();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server)');
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-local-scale-'));
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const upstream = await startScriptedUpstream();
  try {
    // docs/scale-out.md: `nats-server -js -sd /tmp/engram-nats` (here on a free port instead of 4222).
    const natsPort = await freePort();
    const nats = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(natsPort), '-sd', path.join(home, 'nats')]);
    children.push(nats);
    await waitFor(nats, /Server is ready/, 'nats-server');

    // docs/scale-out.md: `ENGRAM_NATS_URL=nats://127.0.0.1:4222`, then `npx engram serve --port 8420` and `--port 8421`.
    const env = cleanEnv({ HOME: home, ENGRAM_NATS_URL: `nats://127.0.0.1:${natsPort}`, ENGRAM_SETTLE_MS: '200' });
    const serve = async (): Promise<string> => {
      const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--log-level', 'warn'], { env });
      children.push(child);
      child.stderr.on('data', (chunk) => logs.push(String(chunk)));
      child.stdout.on('data', (chunk) => logs.push(String(chunk)));
      return (await waitFor(child, /listening on (http:\/\/\S+)/, 'engram serve'))[1];
    };
    // One after the other: the first writes the shared data dir's admin token and secret key.
    const a = await serve();
    const b = await serve();
    assert.is.not(a, b);

    const cli = (args: string[]): Promise<CliRun> => runCli(args, { env });
    const created = await cli(['agent', 'create', '--org', 'local', '--name', 'bot', '--upstream', upstream.url, '--json', '--url', a]);
    assert.is(created.code, 0, created.stderr);
    const agent = JSON.parse(created.stdout);
    assert.ok(agent.base_url.startsWith(`${a}/v0/orgs/`));

    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const openai = new OpenAI({ baseURL: `${agent.base_url}/v1`, apiKey: agent.token, maxRetries: 0 });
    const answer = await openai.chat.completions.create({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'REMEMBER: The billing service reads its settings from config/billing.toml.' },
      ],
    });
    assert.is(answer.choices[0]?.message.content, 'Noted.');

    const learnt = await eventually(
      async () => {
        const listed = await cli(['reflections', 'list', '--org', 'local', '--agent', 'bot', '--json', '--url', b]);
        assert.is(listed.code, 0, listed.stderr);
        const { data } = JSON.parse(listed.stdout) as { data: Array<{ id: string; content: string }> };
        return data.length > 0 ? data : undefined;
      },
      20_000,
      'the reflection, read through the second replica',
    ).catch((error) => {
      throw new Error(`${error.message}; upstream saw ${upstream.requests.map((r) => `${r.method} ${r.path}${r.extraction ? ' (extraction)' : ''}`).join(', ')}; logs:\n${logs.join('')}`);
    });
    assert.match(learnt[0].content, 'config/billing.toml');

    // The conversation id as the CLI prints it is the one `--conversation` takes.
    const shown = await cli(['reflections', 'show', '--org', 'local', '--agent', 'bot', learnt[0].id, '--url', b]);
    const conversation = /learnt from conversation (\S+)/.exec(shown.stdout)?.[1];
    assert.match(conversation ?? '', /^h:[A-Za-z0-9_-]+:[A-Za-z0-9_-]+$/, shown.stdout);
    const byConversation = await cli(['reflections', 'list', '--org', 'local', '--agent', 'bot', '--conversation', conversation!, '--json', '--url', b]);
    assert.equal(
      JSON.parse(byConversation.stdout).data.map((reflection: { id: string }) => reflection.id),
      learnt.map((reflection) => reflection.id),
    );
  } finally {
    for (const child of children.reverse()) await stop(child);
    await upstream.close();
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test.run();
