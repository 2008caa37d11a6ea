/** Which addresses an upstream may be at: the classes, the policy, names and mapped forms. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as dns from 'node:dns';
import * as net from 'node:net';
import { classifyAddress } from '../../src/security/address-class.js';
import { guardedLookup, hostRefusal, isAddressRefusal, refusal, upstreamPolicies } from '../../src/security/address-policy.js';

const OPEN = { allowPrivate: true };
const CLOSED = { allowPrivate: false };

test('classes of IPv4 and IPv6 addresses, mapped forms included', () => {
  const cases: Array<[string, string | undefined]> = [
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:a9fe:a9fe', 'metadata'],
    ['[::ffff:169.254.169.254]', 'metadata'],
    ['169.254.1.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['127.0.0.1', 'loopback'],
    ['127.8.9.10', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::0.0.0.1', 'loopback'],
    ['[::1%lo]', 'loopback'],
    ['::2', 'public'],
    ['127.1', undefined],
    ['10.1.2.3', 'private'],
    ['172.20.0.5', 'private'],
    ['192.168.1.10', 'private'],
    ['100.64.0.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'multicast'],
    ['ff02::1', 'multicast'],
    ['8.8.8.8', 'public'],
    ['172.32.0.1', 'public'],
    ['2606:4700::1111', 'public'],
    ['api.openai.com', undefined],
  ];
  for (const [address, kind] of cases) assert.is(classifyAddress(address), kind, address);
});

test('link-local, metadata, unspecified and multicast are always refused; loopback and private only when forbidden', () => {
  for (const address of ['169.254.169.254', 'fe80::1', '0.0.0.0', '224.0.0.1']) {
    assert.ok(refusal(address, OPEN), address);
    assert.ok(refusal(address, CLOSED), address);
  }
  for (const address of ['127.0.0.1', '10.0.0.8', '::1']) {
    assert.is(refusal(address, OPEN), undefined, address);
    assert.match(refusal(address, CLOSED) ?? '', /ENGRAM_UPSTREAM_ALLOW_PRIVATE/);
  }
  assert.is(refusal('8.8.8.8', CLOSED), undefined);
  assert.match(refusal('169.254.169.254', OPEN) ?? '', /metadata/);
});

test('URL hosts: literals in any form, metadata names, localhost when private is forbidden', () => {
  assert.match(hostRefusal(new URL('http://169.254.169.254/latest/meta-data/'), OPEN) ?? '', /metadata/);
  assert.match(hostRefusal(new URL('http://[::ffff:169.254.169.254]/'), OPEN) ?? '', /metadata/);
  // WHATWG URL parsing normalises decimal and hex forms to dotted IPv4.
  assert.match(hostRefusal(new URL('http://2852039166/'), OPEN) ?? '', /metadata/);
  assert.match(hostRefusal(new URL('http://0xa9.0xfe.0xa9.0xfe/'), OPEN) ?? '', /metadata/);
  assert.match(hostRefusal(new URL('http://metadata.google.internal/computeMetadata/v1/'), OPEN) ?? '', /metadata/);
  assert.match(hostRefusal(new URL('http://METADATA.google.internal./'), OPEN) ?? '', /metadata/);
  assert.is(hostRefusal(new URL('http://localhost:11434/v1'), OPEN), undefined);
  assert.match(hostRefusal(new URL('http://localhost:11434/v1'), CLOSED) ?? '', /loopback/);
  assert.is(hostRefusal(new URL('https://api.openai.com/v1'), CLOSED), undefined);
});

test('connecting: the resolved address is checked, not the name (a name pointing at metadata is refused)', async () => {
  // A resolver standing in for DNS that answers what a rebinding attacker's name would.
  const answers: Record<string, Array<{ address: string; family: number }>> = {
    'rebind.example': [{ address: '169.254.169.254', family: 4 }],
    'local.example': [{ address: '127.0.0.1', family: 4 }],
  };
  const resolve = (host: string, _options: object, callback: (e: NodeJS.ErrnoException | null, a: any) => void) =>
    answers[host] ? callback(null, answers[host]) : dns.lookup(host, { all: true }, callback);
  const server = net.createServer((socket) => socket.end('hello'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const connect = (host: string, policy: { allowPrivate: boolean }) =>
    new Promise<string>((resolveConnect, reject) => {
      const socket = net.connect({ host, port, lookup: guardedLookup(resolve as never, policy) as never });
      let data = '';
      socket.on('data', (chunk) => (data += chunk));
      socket.on('end', () => resolveConnect(data));
      socket.on('error', reject);
    });
  try {
    assert.is(await connect('local.example', OPEN), 'hello', 'allowed: loopback under the default policy');
    const refused = await connect('rebind.example', OPEN).then(() => undefined, (error: Error & { code?: string }) => error);
    assert.is(refused?.code, 'ENGRAM_ADDRESS_REFUSED');
    assert.match(refused?.message ?? '', /rebind\.example is refused: 169\.254\.169\.254 is a cloud metadata address/);
    const closed = await connect('local.example', CLOSED).then(() => undefined, (error: Error & { code?: string }) => error);
    assert.is(closed?.code, 'ENGRAM_ADDRESS_REFUSED');
  } finally {
    server.close();
  }
});

test("a dashboard user's policy: private only when both settings allow it, the refusal says what to do and names the setting to change", () => {
  const both = upstreamPolicies({ upstreamAllowPrivate: true, dashboardUpstreamAllowPrivate: true });
  assert.is(hostRefusal(new URL('http://127.0.0.1:11434'), both.user), undefined);
  const signupOpen = upstreamPolicies({ upstreamAllowPrivate: true, dashboardUpstreamAllowPrivate: false });
  assert.is(hostRefusal(new URL('http://127.0.0.1:11434'), signupOpen.operator), undefined, "the operator's own agents are untouched");
  for (const url of ['http://127.0.0.1:11434', 'http://localhost:8080', 'http://10.1.2.3', 'http://192.168.0.9', 'http://[::1]:80']) {
    assert.match(hostRefusal(new URL(url), signupOpen.user) ?? '', /is a (loopback|private) address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/, url);
  }
  assert.match(hostRefusal(new URL('http://169.254.10.1'), both.user) ?? '', /link-local/, 'link-local whatever the settings say');
  const operatorClosed = upstreamPolicies({ upstreamAllowPrivate: false, dashboardUpstreamAllowPrivate: true });
  assert.match(hostRefusal(new URL('http://10.0.0.1'), operatorClosed.user) ?? '', /\(ENGRAM_UPSTREAM_ALLOW_PRIVATE=true\)/, 'the operator setting is the one to change');
});

test("a user's name that resolves somewhere refused is refused without saying the address it resolved to", async () => {
  const resolve = (_host: string, _options: object, callback: (e: NodeJS.ErrnoException | null, a: any) => void) =>
    callback(null, [{ address: '10.20.30.40', family: 4 }]);
  const { user } = upstreamPolicies({ upstreamAllowPrivate: true, dashboardUpstreamAllowPrivate: false });
  const error = await new Promise<Error | null>((done) => guardedLookup(resolve as never, user)('intranet.example', { all: true }, (e) => done(e)));
  assert.ok(isAddressRefusal(error));
  assert.match(error?.message ?? '', /intranet\.example is refused: it resolves to a private address, and this Engram does not let the agents of people who sign up reach its own machine or network/);
  assert.not.match(error?.message ?? '', '10.20.30.40');
  assert.ok(isAddressRefusal(new Error('wrapped', { cause: error })), 'found through a cause');
  assert.not.ok(isAddressRefusal(new Error('connect ECONNREFUSED')));
});

test.run();
