/**
 * `engram backup FILE` while `engram serve` is serving and writing: one consistent file
 * and the secret key beside it, both mode 0600; restored into a fresh data dir, the
 * server starts, lists the agents and proxies with the agent's old token and upstream
 * key. Real processes, the real SQLite files, the scripted upstream.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';
import { startEngram } from '../support/engram.js';
import { adminApi, serveProcess } from '../support/engram-process.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';

interface Context {
  dir: string;
  upstream: ScriptedUpstream;
}
const test = suite<Context>('engram backup');

test.before(async (context) => {
  context.dir = mkdtempSync(path.join(tmpdir(), 'engram-backup-'));
  context.upstream = await startScriptedUpstream();
});
test.after(async ({ dir, upstream }) => {
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a backup taken while the server writes restores into a fresh data dir that serves the same agents', async ({ dir, upstream }) => {
  const dataDir = path.join(dir, 'live');
  const server = await serveProcess({ ENGRAM_DATA_DIR: dataDir });
  let restored: Awaited<ReturnType<typeof startEngram>> | undefined;
  try {
    const org = await adminApi(server.url, 'POST', '/v0/orgs', { name: 'acme' });
    const agent = await adminApi(server.url, 'POST', `/v0/orgs/${org.id}/agents`, {
      name: 'bot',
      type: 'api_provider',
      upstream: { base_url: upstream.url, api_key: 'sk-upstream-backup-0000000000' },
    });

    // A writer keeps creating organisations for as long as the backup runs.
    let written = 0;
    let writing = true;
    const writer = (async () => {
      while (writing) {
        const created = await adminApi(server.url, 'POST', '/v0/orgs', { name: `w-${written}` });
        if (!created?.id) throw new Error(`write failed: ${JSON.stringify(created)}`);
        written++;
      }
    })();
    const target = path.join(dir, 'engram-backup.db');
    const writtenBefore = written;
    const backup = await runCli(['backup', target, '--data-dir', dataDir], { env: cleanEnv() });
    const writtenDuring = written - writtenBefore;
    writing = false;
    await writer;
    assert.is(backup.code, 0, backup.stderr);
    assert.ok(writtenDuring > 0, 'the server wrote while the backup ran');
    assert.match(backup.stdout, `Backed up `);
    assert.match(backup.stdout, `1 agents`);
    assert.is(statSync(target).mode & 0o777, 0o600);
    assert.not.ok(existsSync(`${target}-wal`), 'one file, no WAL beside it');
    const keyFile = `${target}.secret-key`;
    assert.is(statSync(keyFile).mode & 0o777, 0o600);
    assert.is(readFileSync(keyFile, 'utf8'), readFileSync(path.join(dataDir, 'secret-key'), 'utf8'));
    assert.match(backup.stdout, `Restore into an empty data dir DIR, with no server on it: cp ${target} DIR/engram.db && install -m 600 ${keyFile} DIR/secret-key`);

    // Restore as docs/operations.md says: the file as engram.db, the key as secret-key.
    const fresh = path.join(dir, 'restored');
    mkdirSync(fresh, { mode: 0o700 });
    copyFileSync(target, path.join(fresh, 'engram.db'));
    copyFileSync(keyFile, path.join(fresh, 'secret-key'));
    restored = await startEngram({}, fresh);
    const agents = await restored.api('GET', `/v0/orgs/${org.id}/agents`);
    assert.equal(agents.json.data.map((listed: { name: string }) => listed.name), ['bot']);
    const orgs = await restored.api('GET', '/v0/orgs?limit=1000');
    assert.ok(orgs.json.data.length >= 1 + writtenBefore, `at least the organisations written before the backup (${orgs.json.data.length})`);

    upstream.enqueue({ type: 'text', text: 'Restored and answering.' });
    const answered = await fetch(`${agent.base_url.replace(server.url, restored.url)}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'hello' }] }),
    });
    assert.is(answered.status, 200, await answered.clone().text());
    assert.is((await answered.json()).choices[0].message.content, 'Restored and answering.');
  } finally {
    await restored?.close();
    await server.stop();
  }
});

test('with ENGRAM_SECRET_KEY the key is not written, and the command says it must be kept', async ({ dir }) => {
  const dataDir = path.join(dir, 'configured');
  const key = '5a'.repeat(32);
  const engram = await startEngram({ 'secret-key': key }, dataDir);
  await engram.createAgent('http://127.0.0.1:9');
  await engram.close();
  const target = path.join(dir, 'configured.db');
  const backup = await runCli(['backup', target, '--data-dir', dataDir], { env: cleanEnv({ ENGRAM_SECRET_KEY: key }) });
  assert.is(backup.code, 0, backup.stderr);
  assert.not.ok(existsSync(`${target}.secret-key`));
  assert.match(backup.stderr, 'the secret key comes from ENGRAM_SECRET_KEY and is not in this backup: keep it');
});

test('no database in the data dir: one line naming it, exit 1', async ({ dir }) => {
  const empty = path.join(dir, 'empty');
  const backup = await runCli(['backup', path.join(dir, 'nothing.db'), '--data-dir', empty], { env: cleanEnv() });
  assert.is(backup.code, 1);
  assert.is(backup.stderr.trim().split('\n').length, 1, backup.stderr);
  assert.match(backup.stderr, `engram: No database at ${path.join(empty, 'engram.db')}`);
  assert.not.ok(existsSync(path.join(dir, 'nothing.db')));
});

test.run();
