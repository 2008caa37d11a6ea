/**
 * The ConversationStore contract: revision-checked writes, so concurrent writers (a
 * request settling, extraction moving the watermark, another replica) never undo each
 * other. Every adapter runs this suite, written only against src/ports/conversations.ts.
 */
import * as assert from 'uvu/assert';
import { newConversationState, type ConversationState } from '../../src/domain/conversation-state.js';
import { updateConversation } from '../../src/control/conversation-updates.js';
import type { ConversationStore } from '../../src/ports/index.js';
import { harnessSuite, sleep } from './helpers.js';
import type { ControlHarness } from './control-harness.js';

export function conversationsContract(name: string, open: () => Promise<ControlHarness>): void {
  const { test, harness } = harnessSuite(`ConversationStore contract: ${name}`, open);
  const store = (context: { harness?: ControlHarness }): ConversationStore => harness(context).stores.conversations;

  const withBlock = (state: ConversationState, index: number): ConversationState => ({
    ...state,
    insertions: [...state.insertions, { index, messageHash: `m${index}`, block: `\n<engram-reflections>${index}</engram-reflections>`, kind: 'reflections' }],
  });

  test('round trip, keyed by agent; ids of any shape', async (context) => {
    const s = store(context);
    assert.is(await s.get('agt_a', 'c1'), undefined);
    const ids = ['c1', 's:AbC-_x:Zz09', 'x:user given id with spaces/and.dots*', 't:codex:0199a-uuid', 'h:' + 'é'.repeat(40)];
    for (const id of ids) {
      const state = withBlock({ ...newConversationState('agt_a', id, 'messages', 1000), injectedIds: ['r1'] }, 2);
      const revision = await s.put(state, undefined);
      assert.type(revision, 'number');
      const stored = await s.get('agt_a', id);
      assert.equal(stored?.value, state);
      assert.is(stored?.revision, revision);
    }
    assert.is(await s.get('agt_b', 'c1'), undefined, 'another agent');
    const upload = { ...newConversationState('agt_a', 'u1', 'responses', 5), upload: { sha256: 'h', turns: 3, fingerprint: 'f', at: 5 } };
    await s.put(upload, undefined);
    assert.equal((await s.get('agt_a', 'u1'))?.value, upload, 'an upload mark round-trips');
  });

  test('put names the revision it read: a stale write changes nothing', async (context) => {
    const s = store(context);
    const state = newConversationState('agt_a', 'c1', 'chat-completions', 1000);
    const first = await s.put(state, undefined);
    assert.ok(first !== undefined);
    assert.is(await s.put({ ...state, extractedTurns: 9 }, undefined), undefined, 'create over an existing state fails');
    const second = await s.put({ ...state, extractedTurns: 2 }, first);
    assert.ok(second !== undefined && second !== first);
    assert.is(await s.put({ ...state, extractedTurns: 1 }, first), undefined, 'the first revision is stale now');
    const stored = await s.get('agt_a', 'c1');
    assert.is(stored?.value.extractedTurns, 2);
    assert.is(stored?.revision, second);
  });

  test('concurrent writers: the watermark never moves back and no insertion is lost', async (context) => {
    const h = harness(context);
    const writers = [h.stores.conversations, (await h.peer?.())?.conversations ?? h.stores.conversations];
    const agentId = 'agt_a';
    const id = 's:session:opening';
    await writers[0].put(newConversationState(agentId, id, 'messages', 1), undefined);
    const marks = [3, 7, 5, 12, 9, 1, 11, 4];
    const blocks = [0, 1, 2, 3, 4, 5, 6, 7];
    const tasks = [
      // Extraction jobs moving the watermark, in no particular order...
      ...marks.map((upTo, i) =>
        updateConversation(writers[i % 2], agentId, id, (current) => current && { ...current, extractedTurns: Math.max(current.extractedTurns, upTo) }),
      ),
      // ...while requests settle, each adding its block and activity.
      ...blocks.map((index, i) =>
        updateConversation(writers[(i + 1) % 2], agentId, id, (current) => current && { ...withBlock(current, index), lastActivityAt: Math.max(current.lastActivityAt, 100 + index) }),
      ),
    ];
    await Promise.all(tasks);
    const final = (await writers[0].get(agentId, id))?.value;
    assert.is(final?.extractedTurns, 12, 'the highest watermark stands');
    assert.equal(final?.insertions.map((i) => i.index).sort((a, b) => a - b), blocks, 'every insertion kept');
    assert.is(final?.lastActivityAt, 107);
  });

  test('a state of several megabytes round-trips; revisions still guard it', async (context) => {
    const s = store(context);
    // A long conversation keeps every block it was given: ~3 MB of them, past NATS's default max_payload.
    // Multi-byte text: the size that matters is in bytes.
    const insertions = Array.from({ length: 750 }, (_, index) => ({
      index,
      messageHash: `m${index}`,
      block: `\n<engram-reflections>${index} ${'é'.repeat(2_000)}</engram-reflections>`,
      kind: 'reflections' as const,
    }));
    const large: ConversationState = { ...newConversationState('agt_a', 's:long', 'messages', 1), insertions };
    assert.ok(Buffer.byteLength(JSON.stringify(large)) > 3_000_000);
    const created = await s.put(large, undefined);
    assert.ok(created !== undefined);
    const stored = await s.get('agt_a', 's:long');
    assert.equal(stored?.value, large);
    assert.is(stored?.revision, created);
    assert.is(await s.put({ ...large, extractedTurns: 1 }, undefined), undefined, 'create over an existing large state fails');
    const grown = withBlock(large, 750);
    const second = await s.put(grown, created);
    assert.ok(second !== undefined && second !== created);
    assert.is(await s.put({ ...large, extractedTurns: 2 }, created), undefined, 'a stale write over a large state changes nothing');
    assert.equal((await s.get('agt_a', 's:long'))?.value, grown);
    const small = { ...newConversationState('agt_a', 's:long', 'messages', 1), extractedTurns: 3 };
    const third = await s.put(small, second);
    assert.ok(third !== undefined && third !== second);
    assert.is(await s.put(grown, second), undefined, 'nor after it shrank');
    const final = await s.get('agt_a', 's:long');
    assert.equal(final?.value, small);
    assert.is(final?.revision, third);
  });

  test('session marks: explicit keys, per agent', async (context) => {
    const s = store(context);
    assert.is(await s.hasSession('agt_a', 'digestA'), false);
    await s.markSession('agt_a', 'digestA', 1000);
    await s.markSession('agt_a', 'digestA', 2000);
    assert.is(await s.hasSession('agt_a', 'digestA'), true);
    assert.is(await s.hasSession('agt_a', 'digest'), false, 'no prefix matching');
    assert.is(await s.hasSession('agt_a', 'digestAB'), false);
    assert.is(await s.hasSession('agt_b', 'digestA'), false, 'another agent');
  });

  test('idle conversations and session marks are pruned; active ones stay', async (context) => {
    const s = store(context);
    await s.put(newConversationState('agt_a', 'old', 'messages', 1_000), undefined);
    await s.put(newConversationState('agt_a', 'recent', 'chat-completions', 5_000), undefined);
    const revived = newConversationState('agt_a', 'revived', 'messages', 1_000);
    const revision = await s.put(revived, undefined);
    await s.put({ ...revived, lastActivityAt: 6_000 }, revision);
    await s.markSession('agt_a', 'old-session', 1_000);
    await s.markSession('agt_a', 'live-session', 1_000);
    await s.markSession('agt_a', 'live-session', 6_000);
    assert.is(await s.prune(2_000), 1);
    assert.is(await s.get('agt_a', 'old'), undefined);
    assert.ok(await s.get('agt_a', 'recent'));
    assert.ok(await s.get('agt_a', 'revived'), 'the latest activity counts');
    assert.is(await s.hasSession('agt_a', 'old-session'), false);
    assert.is(await s.hasSession('agt_a', 'live-session'), true);
    assert.is(await s.prune(2_000), 0);
    // A pruned conversation starts afresh.
    assert.ok((await s.put(newConversationState('agt_a', 'old', 'messages', 7_000), undefined)) !== undefined);
  });

  test('deleteAgent removes its conversations and session marks only', async (context) => {
    const s = store(context);
    await s.put(newConversationState('agt_a', 'c1', 'responses', 1), undefined);
    await s.put(newConversationState('agt_b', 'c1', 'responses', 1), undefined);
    await s.markSession('agt_a', 'd', 1);
    await s.markSession('agt_b', 'd', 1);
    await s.deleteAgent('agt_a');
    assert.is(await s.get('agt_a', 'c1'), undefined);
    assert.is(await s.hasSession('agt_a', 'd'), false);
    assert.ok(await s.get('agt_b', 'c1'));
    assert.is(await s.hasSession('agt_b', 'd'), true);
  });

  test('a second replica reads what the first wrote, and its stale writes fail', async (context) => {
    const h = harness(context);
    if (!h.peer) return;
    const peer = (await h.peer()).conversations;
    const state = newConversationState('agt_a', 'c1', 'messages', 1);
    const revision = await h.stores.conversations.put(state, undefined);
    assert.equal((await peer.get('agt_a', 'c1'))?.value, state);
    await sleep(1);
    assert.ok((await peer.put({ ...state, extractedTurns: 3 }, revision)) !== undefined);
    assert.is(await h.stores.conversations.put({ ...state, extractedTurns: 1 }, revision), undefined);
    assert.is((await h.stores.conversations.get('agt_a', 'c1'))?.value.extractedTurns, 3);
  });

  test('data survives reopening', async (context) => {
    const h = harness(context);
    if (!h.reopen) return;
    const state = withBlock(newConversationState('agt_a', 'c1', 'messages', 5), 1);
    await h.stores.conversations.put(state, undefined);
    await h.stores.conversations.markSession('agt_a', 'd', 5);
    const reopened = (await h.reopen()).conversations;
    assert.equal((await reopened.get('agt_a', 'c1'))?.value, state);
    assert.is(await reopened.hasSession('agt_a', 'd'), true);
  });

  test.run();
}
