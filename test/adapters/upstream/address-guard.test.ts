/**
 * The upstream client under an address policy, over real sockets: literals refused
 * before any connection, names checked on the address they resolve to when connecting.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as dns from 'node:dns';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UndiciUpstream } from '../../../src/adapters/upstream/undici-upstream.js';
import { EngramError } from '../../../src/errors.js';

/** A resolver for names under `.test` (what a rebinding attacker's DNS would answer); the system's for the rest. */
const answers: Record<string, string> = { 'loopback.test': '127.0.0.1', 'rebind.test': '169.254.169.254', 'private.test': '10.1.2.3' };
const resolve = ((host: string, options: object, callback: (...args: unknown[]) => void) => {
  const address = answers[host];
  if (address === undefined) return dns.lookup(host, options as dns.LookupAllOptions, callback as never);
  const all = [{ address, family: 4 }];
  return (options as { all?: boolean }).all ? callback(null, all) : callback(null, address, 4);
}) as unknown as typeof dns.lookup;

async function withServer(run: (port: number, hits: () => number) => Promise<void>): Promise<void> {
  let hits = 0;
  const server = http.createServer((_request, response) => {
    hits++;
    response.end('ok');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  try {
    await run((server.address() as AddressInfo).port, () => hits);
  } finally {
    server.close();
  }
}

const refusal = async (client: UndiciUpstream, url: string): Promise<EngramError | undefined> => {
  try {
    const response = await client.send({ url, method: 'GET', headers: {} });
    for await (const _chunk of response.body);
    return undefined;
  } catch (error) {
    return error as EngramError;
  }
};

test('default policy: loopback names and literals reach a local server; metadata refused by literal, name and resolved address', () =>
  withServer(async (port, hits) => {
    const client = new UndiciUpstream({ timeoutMs: 5_000, addressPolicy: { allowPrivate: true }, resolve });
    try {
      assert.is(await refusal(client, `http://127.0.0.1:${port}/v1/models`), undefined);
      assert.is(await refusal(client, `http://loopback.test:${port}/v1/models`), undefined, 'a name resolving to loopback');
      assert.is(hits(), 2);
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:a9fe:a9fe]/', 'http://metadata.google.internal/']) {
        const error = await refusal(client, url);
        assert.is(error?.code, 'upstream_unreachable', url);
        assert.match(error?.message ?? '', /refused: .*metadata/, url);
      }
      const rebound = await refusal(client, `http://rebind.test:${port}/v1/models`);
      assert.is(rebound?.code, 'upstream_unreachable');
      assert.match(rebound?.message ?? '', /rebind\.test is refused: 169\.254\.169\.254 is a cloud metadata address/);
      assert.is(hits(), 2, 'nothing more reached any server');
    } finally {
      await client.close();
    }
  }));

test('private forbidden: loopback and private refused however they are named', () =>
  withServer(async (port, hits) => {
    const client = new UndiciUpstream({ timeoutMs: 5_000, addressPolicy: { allowPrivate: false }, resolve });
    try {
      for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://loopback.test:${port}/`, 'http://private.test/']) {
        const error = await refusal(client, url);
        assert.is(error?.code, 'upstream_unreachable', url);
        assert.match(error?.message ?? '', /ENGRAM_UPSTREAM_ALLOW_PRIVATE/, url);
      }
      assert.is(hits(), 0);
    } finally {
      await client.close();
    }
  }));

test("a dashboard user's upstream: a name resolving to loopback is refused at connect time, even while the operator's connection to it is open", () =>
  withServer(async (port, hits) => {
    const client = new UndiciUpstream({
      timeoutMs: 5_000,
      addressPolicy: { allowPrivate: true },
      userAddressPolicy: { allowPrivate: false, setting: 'ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE', setByUser: true, discreet: true },
      resolve,
    });
    try {
      const url = `http://loopback.test:${port}/v1/models`;
      assert.is(await refusal(client, url), undefined, "the operator's agent reaches it (and keeps the connection alive)");
      const send = (setBy: 'operator' | 'user') => client.send({ url, method: 'GET', headers: {}, setBy });
      const refused = await send('user').then(() => undefined, (error: EngramError) => error);
      assert.is(refused?.code, 'upstream_unreachable');
      assert.match(refused?.message ?? '', /loopback\.test is refused: it resolves to a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network\. Use the public address of the model server, or ask whoever runs Engram to allow local models \(ENGRAM_DASHBOARD_UPSTREAM_ALLOW_PRIVATE=true\)/);
      assert.not.match(refused?.message ?? '', '127.0.0.1', 'the address it resolved to is not told');
      const byAddress = await client.send({ url: `http://127.0.0.1:${port}/`, method: 'GET', headers: {}, setBy: 'user' }).then(() => undefined, (error: EngramError) => error);
      assert.match(byAddress?.message ?? '', /127\.0\.0\.1 is a loopback address, and this Engram does not let the agents of people who sign up reach its own machine or network/);
      assert.is(hits(), 1, "only the operator's request reached the server");
      const again = await send('operator');
      for await (const _chunk of again.body);
      assert.is(again.status, 200, "the operator's agent still does");
    } finally {
      await client.close();
    }
  }));

test.run();
