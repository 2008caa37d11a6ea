import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SqliteEventBus } from '../../src/adapters/sqlite/event-bus.js';
import { sealedBus } from '../../src/security/sealed-bus.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { waitFor } from '../contracts/helpers.js';
import { tempDb } from '../adapters/sqlite/helpers.js';

test('payloads are stored sealed, delivered and listed open; another key dead-letters instead of retrying', async () => {
  const temp = tempDb();
  const raw = new SqliteEventBus(temp.db, { maxPollMs: 20 });
  const key = randomBytes(32);
  try {
    const bus = sealedBus(raw, new Vault(new SecretBox(key)));
    await bus.publish('jobs', { turns: ['the vault code is 1234'] });
    const stored = temp.db.prepare('SELECT payload FROM bus_messages').pluck().get() as string;
    assert.not.match(stored, '1234');
    assert.match(stored, /^\{"sealed":"v1:/);

    const seen: unknown[] = [];
    const sub = bus.consume('jobs', async (message) => {
      seen.push(message.payload);
      await message.ack();
    });
    await waitFor(() => seen.length === 1);
    await sub.stop();
    assert.equal(seen, [{ turns: ['the vault code is 1234'] }]);

    // A job queued before sealing existed is delivered as it was.
    await raw.publish('jobs', { turns: ['legacy'] });
    const legacy: unknown[] = [];
    const again = bus.consume('jobs', async (message) => {
      legacy.push(message.payload);
      await message.ack();
    });
    await waitFor(() => legacy.length === 1);
    await again.stop();
    assert.equal(legacy, [{ turns: ['legacy'] }]);

    await bus.publish('jobs', { turns: ['sealed with the first key'] });
    const stranger = sealedBus(raw, new Vault(new SecretBox(randomBytes(32))));
    let handled = 0;
    const sub2 = stranger.consume('jobs', async () => {
      handled++;
    });
    await waitFor(async () => (await raw.deadLetters('jobs')).length === 1, 3000, 'the dead letter');
    await sub2.stop();
    assert.is(handled, 0, 'the handler never sees a payload it cannot open');
    assert.match((await raw.deadLetters('jobs'))[0].reason, 'does not open with this secret key');
    assert.equal((await bus.deadLetters('jobs'))[0].payload, { turns: ['sealed with the first key'] }, 'listed open with the right key');
  } finally {
    await raw.close();
    temp.remove();
  }
});

test.run();
