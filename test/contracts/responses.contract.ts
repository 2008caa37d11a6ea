/**
 * The ResponseStore contract (Responses chains), written only against src/ports/responses.ts.
 * Records hold sealed content of any size: a long conversation's exceeds one NATS message.
 */
import * as assert from 'uvu/assert';
import type { StoredResponse } from '../../src/ports/index.js';
import { harnessSuite } from './helpers.js';
import type { ControlHarness } from './control-harness.js';

export function responsesContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`ResponseStore contract: ${name}`, open);
  const record = (agentId: string, id: string, previous: string | null, createdAt: number, sealed = `v1:sealed:${id}`): StoredResponse => ({
    id,
    agentId,
    conversationId: 'c1',
    previousResponseId: previous,
    createdAt,
    sealed,
  });

  test('put, get, per agent, idempotent on the id, delete', async (context) => {
    const s = harness(context).stores.responses;
    await s.put(record('agt_a', 'resp_1', null, 100));
    await s.put(record('agt_a', 'resp_2', 'resp_1', 200));
    assert.equal(await s.get('agt_a', 'resp_2'), record('agt_a', 'resp_2', 'resp_1', 200));
    assert.is(await s.get('agt_b', 'resp_2'), undefined, "another agent's ids are not found");
    assert.is(await s.delete('agt_b', 'resp_2'), false);
    await s.put(record('agt_a', 'resp_2', 'resp_1', 250));
    assert.is((await s.get('agt_a', 'resp_2'))?.createdAt, 250, 'put replaces by id');
    assert.is(await s.delete('agt_a', 'resp_2'), true);
    assert.is(await s.delete('agt_a', 'resp_2'), false);
    assert.is(await s.get('agt_a', 'resp_2'), undefined);
  });

  test('a record of several megabytes round-trips whole', async (context) => {
    const s = harness(context).stores.responses;
    const big = 'v1:' + 'x'.repeat(3 * 1024 * 1024 + 17) + ':end';
    await s.put(record('agt_a', 'resp_big', null, 1, big));
    const stored = await s.get('agt_a', 'resp_big');
    assert.is(stored?.sealed.length, big.length);
    assert.ok(stored?.sealed === big, 'not truncated');
    await s.put(record('agt_a', 'resp_big', null, 2, 'small now'));
    assert.is((await s.get('agt_a', 'resp_big'))?.sealed, 'small now', 'a large record can be replaced by a small one');
    assert.is(await s.delete('agt_a', 'resp_big'), true);
  });

  test('prune by age; deleteAgent removes only that agent', async (context) => {
    const s = harness(context).stores.responses;
    await s.put(record('agt_a', 'resp_old', null, 100));
    await s.put(record('agt_a', 'resp_new', null, 300));
    await s.put(record('agt_b', 'resp_b', null, 300));
    assert.is(await s.prune(150), 1);
    assert.is(await s.get('agt_a', 'resp_old'), undefined);
    assert.ok(await s.get('agt_a', 'resp_new'));
    await s.deleteAgent('agt_a');
    assert.is(await s.get('agt_a', 'resp_new'), undefined);
    assert.ok(await s.get('agt_b', 'resp_b'));
  });

  test('a second replica continues a chain the first recorded', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const peer = (await h.peer()).responses;
    await h.stores.responses.put(record('agt_a', 'resp_1', null, 1));
    assert.equal(await peer.get('agt_a', 'resp_1'), record('agt_a', 'resp_1', null, 1));
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    await h.stores.responses.put(record('agt_a', 'resp_1', null, 1));
    const reopened = (await h.reopen()).responses;
    assert.equal(await reopened.get('agt_a', 'resp_1'), record('agt_a', 'resp_1', null, 1));
  });

  test.run();
}
