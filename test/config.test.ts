/** Settings added with the Responses, MCP and hook work: defaults, overrides, and refusal of bad values. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../src/config.js';

test('MCP server names: engram and service by default, a configurable list, bad lists refused', () => {
  assert.equal(loadConfig({}, {}).mcp.serverNames, ['engram', 'service']);
  assert.equal(loadConfig({}, { ENGRAM_MCP_SERVER_NAMES: 'Memory, engram ' }).mcp.serverNames, ['memory', 'engram']);
  assert.equal(loadConfig({ 'mcp-server-names': 'mem' }, { ENGRAM_MCP_SERVER_NAMES: 'other' }).mcp.serverNames, ['mem'], 'the flag wins');
  for (const bad of [',', 'has space', 'a,b/c']) {
    assert.throws(() => loadConfig({}, { ENGRAM_MCP_SERVER_NAMES: bad }), (error: unknown) => error instanceof ConfigError);
  }
});

test('WebSocket limits: the body limit and 60 minutes by default', () => {
  const defaults = loadConfig({}, {});
  assert.is(defaults.websocket.maxFrameBytes, defaults.bodyLimit);
  assert.is(defaults.websocket.maxConnectionMs, 60 * 60 * 1000);
  const set = loadConfig({}, { ENGRAM_BODY_LIMIT: '65536', ENGRAM_WS_MAX_CONNECTION_MS: '1000' });
  assert.is(set.websocket.maxFrameBytes, 65536, 'follows the body limit');
  assert.is(set.websocket.maxConnectionMs, 1000);
  assert.throws(() => loadConfig({}, { ENGRAM_WS_MAX_FRAME_BYTES: '10' }), (error: unknown) => error instanceof ConfigError);
});

test('request log retention: 7 days by default; the environment, the flag and the config file set it; under a day refused', () => {
  const DAY = 24 * 60 * 60 * 1000;
  assert.is(loadConfig({}, {}).requestLogMs, 7 * DAY);
  assert.is(loadConfig({}, { ENGRAM_REQUEST_LOG_DAYS: '30' }).requestLogMs, 30 * DAY);
  assert.is(loadConfig({ 'request-log-days': '2' }, { ENGRAM_REQUEST_LOG_DAYS: '30' }).requestLogMs, 2 * DAY, 'the flag wins');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-config-'));
  try {
    const file = path.join(dir, 'engram.toml');
    fs.writeFileSync(file, 'request-log-days = 3\n');
    assert.is(loadConfig({ config: file }, {}).requestLogMs, 3 * DAY);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  for (const bad of ['0', '-1', '1.5', 'week']) {
    assert.throws(() => loadConfig({}, { ENGRAM_REQUEST_LOG_DAYS: bad }), (error: unknown) => error instanceof ConfigError && error.message.includes('ENGRAM_REQUEST_LOG_DAYS'), bad);
  }
});

test('transcript uploads: 64 MiB and 8 extraction calls by default, both settable', () => {
  const defaults = loadConfig({}, {});
  assert.is(defaults.transcriptMaxBytes, 64 * 1024 * 1024);
  assert.is(defaults.extraction.maxChunks, 8);
  const set = loadConfig({ 'extraction-max-chunks': '2' }, { ENGRAM_TRANSCRIPT_MAX_BYTES: '1048576' });
  assert.is(set.transcriptMaxBytes, 1048576);
  assert.is(set.extraction.maxChunks, 2);
  for (const env of [{ ENGRAM_TRANSCRIPT_MAX_BYTES: '12' }, { ENGRAM_EXTRACTION_MAX_CHUNKS: '0' }]) {
    assert.throws(() => loadConfig({}, env), (error: unknown) => error instanceof ConfigError);
  }
});

test('dashboard upstreams at private addresses: on for a personal install or closed sign-up, off while anyone elsewhere can sign up, settable either way', () => {
  const allowed = (settings: Record<string, string>) => loadConfig({}, settings).dashboardUpstreamAllowPrivate;
  assert.is(allowed({}), true, 'the defaults are a personal install: on loopback only, no proxy in front, sign-up open');
  for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) assert.is(allowed({ ENGRAM_HOST: host }), true, host);
  for (const host of ['0.0.0.0', '::', '10.1.2.3', '192.168.1.9', 'engram.example.com']) {
    assert.is(allowed({ ENGRAM_HOST: host }), false, `${host}: reachable from elsewhere, and anyone there may sign up`);
  }
  assert.is(allowed({ ENGRAM_TRUST_PROXY: 'loopback' }), false, 'a reverse proxy in front brings in other machines');
  assert.is(allowed({ ENGRAM_PUBLIC_URL: 'https://engram.example.com' }), false, 'a public address of its own');
  assert.is(allowed({ ENGRAM_PUBLIC_URL: 'http://localhost:8420' }), true, 'a public URL on this machine is still personal');
  assert.is(allowed({ ENGRAM_HOST: '0.0.0.0', ENGRAM_SIGNUP: 'false' }), true, 'invited users only');
  assert.is(allowed({ ENGRAM_HOST: '0.0.0.0', ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE: 'true' }), true);
  assert.is(loadConfig({ 'dashboard-upstream-allow-private': 'false' }, {}).dashboardUpstreamAllowPrivate, false, 'the setting wins over a personal install');
  assert.throws(() => loadConfig({}, { ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE: 'maybe' }), (error: unknown) => error instanceof ConfigError);
  const thisMachineOnly = (settings: Record<string, string>) => loadConfig({}, settings).dashboardUpstreamPrivateFromThisMachineOnly;
  assert.is(thisMachineOnly({}), true, "a personal install's allowance holds for requests from this machine only");
  assert.is(thisMachineOnly({ ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE: 'true' }), false, 'set by the operator: for every request');
  assert.is(thisMachineOnly({ ENGRAM_SIGNUP: 'false' }), false, 'invited users: for every request');
  assert.is(thisMachineOnly({ ENGRAM_HOST: '0.0.0.0' }), false, 'not a personal install');
});

test('trust-proxy: off by default; addresses and ranges; hops, "true" and nonsense refused', () => {
  assert.is(loadConfig({}, {}).trustProxy, false);
  assert.is(loadConfig({}, { ENGRAM_TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(loadConfig({ 'trust-proxy': '10.0.0.0/8, 172.16.0.1,loopback, fd00::/8' }, {}).trustProxy, ['10.0.0.0/8', '172.16.0.1', 'loopback', 'fd00::/8']);
  for (const bad of ['true', 'on', '1', 'proxy.example', '10.0.0.0/33', '::1/129', '10.0.0.1/8/2', ',', 'uniquelocal, nginx']) {
    assert.throws(() => loadConfig({}, { ENGRAM_TRUST_PROXY: bad }), (error: unknown) => error instanceof ConfigError && /ENGRAM_TRUST_PROXY/.test(error.message), bad);
  }
});

test.run();
