/** The RootIndexStore contract, written only against src/ports/root-index.ts. */
import * as assert from 'uvu/assert';
import { harnessSuite } from './helpers.js';
import type { ControlHarness } from './control-harness.js';

export function rootIndexContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`RootIndexStore contract: ${name}`, open);

  test('put, replace, per agent, delete', async (context) => {
    const s = harness(context).stores.indexes;
    assert.is(await s.get('agt_a'), undefined);
    await s.put('agt_a', '# Index\n- one');
    await s.put('agt_a', '# Index\n- two ✓');
    assert.is(await s.get('agt_a'), '# Index\n- two ✓');
    assert.is(await s.get('agt_b'), undefined);
    await s.delete('agt_a');
    assert.is(await s.get('agt_a'), undefined);
    await s.delete('agt_a');
  });

  test('a second replica reads the latest index', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const peer = (await h.peer()).indexes;
    await h.stores.indexes.put('agt_a', 'first');
    assert.is(await peer.get('agt_a'), 'first');
    await peer.put('agt_a', 'second');
    assert.is(await h.stores.indexes.get('agt_a'), 'second');
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    await h.stores.indexes.put('agt_a', 'durable');
    assert.is(await (await h.reopen()).indexes.get('agt_a'), 'durable');
  });

  test.run();
}
