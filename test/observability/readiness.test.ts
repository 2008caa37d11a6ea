/**
 * `/readyz` tells a load balancer whether this process can serve: with the NATS server
 * behind its bus and control stores gone, it answers 503 naming what failed, while
 * `/healthz` (the process itself) stays 200.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { eventually, startEngram } from '../support/engram.js';
import { startNatsServer } from '../support/nats-server.js';

test('readyz is 503 naming the bus and the control store when their NATS server is down, 200 once it is back', async () => {
  const nats = await startNatsServer();
  const engram = await startEngram({ 'nats-url': nats.url, 'nats-prefix': 'ready', 'secret-key': '34'.repeat(32) });
  let natsDown = false;
  try {
    const ready = await fetch(`${engram.url}/readyz`);
    assert.is(ready.status, 200);
    assert.equal(await ready.json(), { status: 'ready', checks: { control: 'ok', reflections: 'ok', bus: 'ok', recording: 'ok' } });

    await nats.stop();
    natsDown = true;
    const down = await fetch(`${engram.url}/readyz`);
    assert.is(down.status, 503);
    const body = await down.json();
    assert.is(body.status, 'unavailable');
    assert.equal([...body.failed].sort(), ['bus', 'control']);
    assert.is(body.checks.reflections, 'ok', 'the SQLite reflection store still answers');
    assert.type(body.checks.bus, 'string');

    const health = await fetch(`${engram.url}/healthz`);
    assert.is(health.status, 200, 'the process itself is alive');
    await health.text();

    await nats.restart();
    natsDown = false;
    await eventually(async () => {
      const again = await fetch(`${engram.url}/readyz`);
      await again.text();
      return again.status === 200 ? true : undefined;
    }, 20_000, 'ready again');
  } finally {
    // Closing a NATS connection waits for its server: bring it back should an assertion have failed while it was down.
    if (natsDown) await nats.restart();
    await engram.close();
    await nats.cleanup();
  }
});

test.run();
