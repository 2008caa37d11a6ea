/**
 * The config file: every setting the environment can set, in TOML under its setting
 * name; a flag wins over the environment, which wins over the file, which wins over the
 * default. `engram --version` prints the package's version.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../src/config.js';
import { ENGRAM_VERSION } from '../src/version.js';
import { BIN, cleanEnv, runCli } from './support/cli.js';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'engram-config-file-'));
}

function writeFile(dir: string, name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

test('--config FILE: settings by their names, kebab-case or snake_case; flag > environment > file > default', () => {
  const dir = tempDir();
  const file = writeFile(
    dir,
    'engram.toml',
    ['port = 9001', 'rate-limit-agent = 60', 'rate_limit_token = 120', 'settle-ms = 1000', 'upstream-allow-private = false', 'mcp-server-names = ["engram", "memory"]', 'log-format = "json"'].join('\n'),
  );
  const config = loadConfig({ config: file, 'settle-ms': '5' }, { ENGRAM_RATE_LIMIT_AGENT: '30' });
  assert.is(config.port, 9001, 'from the file');
  assert.is(config.limits.tokenPerMinute, 120, 'snake_case key');
  assert.is(config.limits.agentPerMinute, 30, 'the environment wins over the file');
  assert.is(config.settleMs, 5, 'the flag wins over both');
  assert.is(config.upstreamAllowPrivate, false, 'a TOML boolean');
  assert.equal(config.mcp.serverNames, ['engram', 'memory'], 'a TOML list');
  assert.is(config.logFormat, 'json');
  assert.is(config.host, '127.0.0.1', 'the default where nothing sets it');
  assert.is(config.configFile, file);
});

test('ENGRAM_CONFIG names the file too; a named file that is missing is an error', () => {
  const dir = tempDir();
  const file = writeFile(dir, 'custom.toml', 'port = 9002\n');
  assert.is(loadConfig({}, { ENGRAM_CONFIG: file }).port, 9002);
  assert.throws(() => loadConfig({}, { ENGRAM_CONFIG: path.join(dir, 'missing.toml') }), (error: Error) =>
    error instanceof ConfigError && error.message.includes(path.join(dir, 'missing.toml')),
  );
});

test('<data dir>/engram.toml is read when no file is named; it may not move the data dir', () => {
  const dir = tempDir();
  writeFile(dir, 'engram.toml', 'port = 9003\nextraction-concurrency = 4\n');
  const config = loadConfig({ 'data-dir': dir }, {});
  assert.is(config.port, 9003);
  assert.is(config.extraction.concurrency, 4);
  assert.is(config.configFile, path.join(dir, 'engram.toml'));
  assert.is(loadConfig({ 'data-dir': tempDir() }, {}).configFile, undefined, 'no file, no error');

  writeFile(dir, 'engram.toml', `data-dir = ${JSON.stringify(tempDir())}\n`);
  assert.throws(() => loadConfig({ 'data-dir': dir }, {}), /"data-dir" cannot be set in the data dir's own config file/);
});

test('an unknown key, a table or a bad value is an error naming the file and the key', () => {
  const dir = tempDir();
  const unknown = writeFile(dir, 'unknown.toml', 'port = 9004\nrate-limit-agents = 5\n');
  assert.throws(() => loadConfig({ config: unknown }, {}), (error: Error) =>
    error instanceof ConfigError && error.message.startsWith(`${unknown}: unknown setting "rate-limit-agents"`),
  );
  const table = writeFile(dir, 'table.toml', '[limits]\nrate-limit-agent = 5\n');
  assert.throws(() => loadConfig({ config: table }, {}), /table\.toml: unknown setting "limits"/, 'no sections: settings are top-level keys');
  const nested = writeFile(dir, 'nested.toml', '[port]\nvalue = 5\n');
  assert.throws(() => loadConfig({ config: nested }, {}), /nested\.toml: "port" must be a string, a number, a boolean or a list of strings/);
  const bad = writeFile(dir, 'bad.toml', 'port = "eighty"\n');
  assert.throws(() => loadConfig({ config: bad }, {}), (error: Error) => error.message.includes(`"port" in ${bad} must be an integer`));
  const broken = writeFile(dir, 'broken.toml', 'port = \n');
  assert.throws(() => loadConfig({ config: broken }, {}), /broken\.toml is not valid TOML/);
  const recursive = writeFile(dir, 'recursive.toml', 'config = "other.toml"\n');
  assert.throws(() => loadConfig({ config: recursive }, {}), /unknown setting "config"/);
});

test('engram serve --config FILE listens as the file says', async () => {
  const dir = tempDir();
  const dataDir = path.join(dir, 'data');
  const file = writeFile(dir, 'engram.toml', `port = 0\nlog-level = "warn"\ndata-dir = ${JSON.stringify(dataDir)}\n`);
  const serve = spawn(process.execPath, [BIN, 'serve', '--config', file], { cwd: dir, env: cleanEnv() });
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 20_000);
      serve.stderr.on('data', (chunk) => {
        output += chunk;
        if (/listening on http/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      });
      serve.on('close', () => reject(new Error(`serve exited:\n${output}`)));
    });
    assert.match(output, `Settings from ${file}`);
    assert.match(output, `(data dir ${dataDir})`);
  } finally {
    if (serve.exitCode === null && serve.signalCode === null) {
      const exited = new Promise((resolve) => serve.once('close', resolve));
      serve.kill('SIGTERM');
      await exited;
    }
  }
});

test('engram --version and -V print the version', async () => {
  for (const flag of ['--version', '-V']) {
    const run = await runCli([flag]);
    assert.is(run.code, 0, run.stderr);
    assert.is(run.stdout.trim(), ENGRAM_VERSION);
  }
});

test.run();
