/** The default data dir is per user, `~/.engram` (DESIGN section 4), for the server and the client commands alike. */
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadCliConfig, loadConfig } from '../src/config.js';

test('the default data dir is ~/.engram, whatever the working directory', () => {
  const home = path.join(os.tmpdir(), 'someone');
  assert.is(loadConfig({}, { HOME: home }).dataDir, path.join(home, '.engram'));
  assert.is(loadCliConfig({}, { HOME: home }).dataDir, path.join(home, '.engram'));
  assert.is(loadConfig({}, {}).dataDir, path.join(os.homedir(), '.engram'), 'without $HOME, the OS says where home is');
});

test('ENGRAM_DATA_DIR and --data-dir still win', () => {
  const home = path.join(os.tmpdir(), 'someone');
  assert.is(loadConfig({}, { HOME: home, ENGRAM_DATA_DIR: '/srv/engram' }).dataDir, '/srv/engram');
  assert.is(loadConfig({ 'data-dir': '/opt/engram' }, { HOME: home, ENGRAM_DATA_DIR: '/srv/engram' }).dataDir, '/opt/engram');
  assert.is(loadCliConfig({ 'data-dir': 'rel' }, { HOME: home }).dataDir, path.resolve('rel'));
});

test.run();
