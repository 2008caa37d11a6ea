/**
 * docker-compose.yml, nats.conf, deploy/nginx.conf and the Dockerfile cannot run here (no
 * Docker engine): this checks what can be checked without one. Every Engram setting the
 * compose file uses exists and parses, the services reference each other by the names
 * and ports they really have, the load balancer reaches every replica, nats.conf is valid
 * for a real nats-server, and the image runs the installed `engram` command.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { BlockList } from 'node:net';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse } from 'yaml';
import { loadConfig, SETTING_NAMES } from '../../src/config.js';
import { natsServerBinary } from '../support/nats-server.js';
import { ROOT } from '../support/cli.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: string[] | Record<string, unknown>;
  volumes?: string[];
  ports?: string[];
  stop_grace_period?: string;
  healthcheck?: { test?: string[] };
  networks?: { default?: { ipv4_address?: string } };
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
  networks?: { default?: { ipam?: { config?: Array<{ subnet?: string }> } } };
};
const services = compose.services;
const engrams = Object.entries(services).filter(([name]) => name.startsWith('engram'));
const SETTING_VARIABLES = new Set(SETTING_NAMES.map((name) => 'ENGRAM_' + name.toUpperCase().replaceAll('-', '_')));

/**
 * `${VAR:?message}` as docker compose would substitute it from a filled-in .env;
 * `${VAR:-default}`, a setting the .env may leave out, as its default.
 */
function substitute(value: string): string {
  return value.replace(/\$\{(\w+)(:\?[^}]*|:-([^}]*))?\}/g, (_match, name: string, _modifier: string | undefined, fallback: string | undefined) =>
    fallback !== undefined
      ? fallback
      : name === 'ENGRAM_SECRET_KEY'
      ? 'ab'.repeat(32)
      : name === 'ENGRAM_ADMIN_TOKEN'
        ? 'egm_admin_5f0c9e3a71d84b26a9e0c4f7d13b8e62a5c7f9041d6e8b3a' // as compose.env.example says: openssl rand -hex 24
        : `value-of-${name.toLowerCase()}`,
  );
}

test('two Engram replicas, each with every setting known to Engram and valid', () => {
  assert.ok(engrams.length >= 2, 'at least two replicas');
  for (const [name, service] of engrams) {
    assert.is(service.build, '.', `${name} is built from the Dockerfile`);
    const env = service.environment ?? {};
    for (const variable of Object.keys(env)) {
      assert.ok(SETTING_VARIABLES.has(variable), `${name}: ${variable} is not an Engram setting`);
    }
    const overrides = Object.fromEntries(
      Object.entries(env).map(([variable, value]) => [variable.slice('ENGRAM_'.length).toLowerCase().replaceAll('_', '-'), substitute(String(value))]),
    );
    const config = loadConfig(overrides, {});
    assert.ok(config.natsUrl && config.weaviateUrl, `${name} runs on NATS and Weaviate`);
    assert.ok(config.secretKey && config.adminToken, `${name} shares the secret key and admin token with the others`);
    assert.is(config.host, '0.0.0.0', `${name} listens beyond its container`);
    // Without this every client would share the load balancer's address, and its limits.
    const lbAddress = services.lb.networks?.default?.ipv4_address;
    assert.ok(lbAddress, 'the load balancer has a fixed address');
    assert.equal(config.trustProxy, [lbAddress], `${name} takes the client's address from the load balancer, and from nobody else`);
    const subnet = compose.networks?.default?.ipam?.config?.[0]?.subnet ?? '';
    const [network = '', prefix = '32'] = subnet.split('/');
    const inSubnet = new BlockList();
    inSubnet.addSubnet(network, Number(prefix));
    assert.ok(inSubnet.check(lbAddress), `${lbAddress} is in the project network ${subnet}`);
    assert.not.ok(service.ports?.length, `${name} publishes no port: the load balancer is the only way in`);
  }
});

test('a replica is given time to drain before it is killed, and reports ready from /readyz', () => {
  for (const [name, service] of engrams) {
    const grace = loadConfig({}, {}).shutdownGraceMs;
    const period = /^(\d+)s$/.exec(service.stop_grace_period ?? '');
    assert.ok(period && Number(period[1]) * 1000 > grace + 10_000, `${name}: stop_grace_period ${service.stop_grace_period} exceeds the drain (${grace} ms) and the exit after it (10 s)`);
    assert.match(String(service.healthcheck?.test), /\/readyz/, `${name} is healthy when ready`);
  }
});

test('services reference each other by real names and ports; named volumes exist', () => {
  for (const [name, service] of Object.entries(services)) {
    const dependsOn = Array.isArray(service.depends_on) ? service.depends_on : Object.keys(service.depends_on ?? {});
    for (const dependency of dependsOn) assert.ok(services[dependency], `${name} depends on a missing service ${dependency}`);
    for (const volume of service.volumes ?? []) {
      const source = volume.split(':')[0];
      if (!source.startsWith('.')) assert.ok(source in compose.volumes, `${name}: volume ${source} is not declared`);
      else assert.ok(read(source), `${name}: ${source} exists`);
    }
  }
  for (const [name, service] of engrams) {
    const nats = new URL(substitute(service.environment!.ENGRAM_NATS_URL));
    assert.ok(services[nats.hostname]?.image?.startsWith('nats:'), `${name}: ENGRAM_NATS_URL names the nats service`);
    assert.is(nats.port, '4222');
    assert.is(nats.username, 'engram', 'the user nats.conf defines');
    const weaviate = new URL(service.environment!.ENGRAM_WEAVIATE_URL);
    const weaviateService = services[weaviate.hostname];
    assert.ok(weaviateService?.image?.includes('weaviate'), `${name}: ENGRAM_WEAVIATE_URL names the weaviate service`);
    assert.is(weaviateService.command?.[weaviateService.command.indexOf('--port') + 1], weaviate.port, 'Weaviate listens where Engram looks');
    assert.is(weaviateService.environment?.DEFAULT_VECTORIZER_MODULE, 'none', 'Engram brings its own vectors');
    assert.is(weaviateService.environment?.AUTHENTICATION_APIKEY_ALLOWED_KEYS, service.environment!.ENGRAM_WEAVIATE_API_KEY, 'the same API key');
    const natsService = services[nats.hostname];
    assert.is(nats.password, substitute(String(natsService.environment?.ENGRAM_NATS_PASSWORD)), 'the password nats.conf reads');
  }
});

test('every replica names itself by the one address the load balancer serves (ENGRAM_PUBLIC_URL), not 0.0.0.0', () => {
  const [published] = services.lb.ports ?? [];
  const hostPort = String(published).split(':')[0];
  const served = `http://localhost:${hostPort}`;
  const publicUrls = engrams.map(([name, service]) => {
    const raw = service.environment?.ENGRAM_PUBLIC_URL;
    assert.ok(raw, `${name} sets ENGRAM_PUBLIC_URL`);
    const publicUrl = loadConfig({ 'public-url': substitute(String(raw)) }, {}).publicUrl;
    assert.is(publicUrl, served, `${name}: by default the address the lb publishes on this host`);
    return String(raw);
  });
  assert.is(new Set(publicUrls).size, 1, 'one public address for every replica');
  // An operator's own name (behind TLS) comes from .env, which the example documents.
  assert.match(publicUrls[0], /^\$\{ENGRAM_PUBLIC_URL:-/);
  assert.match(read('deploy/compose.env.example'), /^# ENGRAM_PUBLIC_URL=https:\/\//m);
});

test('the load balancer reaches every replica on its port and publishes Engram’s', () => {
  const nginx = read('deploy/nginx.conf');
  const servers = [...nginx.matchAll(/^\s*server\s+([\w-]+):(\d+)/gm)].map((match) => `${match[1]}:${match[2]}`);
  assert.equal(servers.sort(), engrams.map(([name, service]) => `${name}:${service.environment!.ENGRAM_PORT}`).sort());
  assert.match(nginx, /listen 8420;/);
  assert.match(nginx, /proxy_buffering off;/, 'streams are not buffered');
  assert.match(nginx, /proxy_set_header Upgrade/, 'WebSockets pass');
  assert.match(nginx, /proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/, 'the address nginx saw goes last, where Engram looks');
  assert.ok(services.lb.ports?.includes('8420:8420'));
  assert.ok(services.lb.volumes?.some((volume) => volume.startsWith('./deploy/nginx.conf:')));
});

test('nats.conf is valid for a real nats-server, with JetStream and client auth', () => {
  const conf = read('nats.conf');
  assert.match(conf, /jetstream \{/);
  assert.match(conf, /user: engram, password: \$ENGRAM_NATS_PASSWORD/);
  assert.match(conf, /^http: /m, 'monitoring port');
  assert.match(conf, /^# cluster \{/m, 'a commented cluster block');
  const binary = natsServerBinary();
  if (!binary) throw new Error('nats-server is not installed; .ci/run installs it');
  const checked = spawnSync(binary, ['-c', path.join(ROOT, 'nats.conf'), '-t'], {
    env: { ...process.env, ENGRAM_NATS_PASSWORD: 'secret', NATS_SERVER_NAME: 'check' },
    encoding: 'utf8',
  });
  assert.is(checked.status, 0, checked.stderr + checked.stdout);
});

test('the image installs from the lock file and runs the engram command', () => {
  const dockerfile = read('Dockerfile');
  // The Node line CI tests (.ci/run's NODE_LTS), so the image runs what was tested.
  const tested = /^NODE_LTS=(\d+)\./m.exec(read('.ci/run'))?.[1];
  assert.ok(tested, '.ci/run names the Node it tests');
  assert.match(dockerfile, new RegExp(`^FROM node:${tested}-`, 'm'));
  assert.match(dockerfile, /npm ci --omit=dev/);
  for (const dir of ['bin', 'src', 'machines']) assert.match(dockerfile, new RegExp(`^COPY ${dir} `, 'm'), `copies ${dir}`);
  assert.match(dockerfile, /CMD \["node", "bin\/engram.js", "serve"\]/);
  assert.match(dockerfile, /^USER node$/m, 'not root');
  const pkg = JSON.parse(read('package.json')) as { dependencies: Record<string, string> };
  assert.ok(pkg.dependencies.tsx, 'tsx, which bin/engram.js loads, is a runtime dependency');
});

test.run();
