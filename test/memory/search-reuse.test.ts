/**
 * Retrieval reuses a search asked again at the same store version (`ReflectionStore.version`):
 * what injection takes is exactly what it takes without the reuse, on both evaluation sets,
 * and a write between two searches is seen by the second.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BLIND_SET, CALIBRATION_SET } from '../../bench/eval/sets.js';
import { createRetrieval, type Decision } from '../../src/memory/retrieval.js';
import type { ReflectionStore } from '../../src/ports/index.js';
import type { Visibility } from '../../src/domain/types.js';
import { openWorld } from './sqlite-world.js';

/** The store without its version: every search runs. */
function unversioned(store: ReflectionStore): ReflectionStore {
  return new Proxy(store, {
    get(target, key) {
      if (key === 'version') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** What a decision says, by reflection id: what was taken and how relevant, or why nothing was. */
const said = (decision: Decision) => ({
  taken: decision.taken.map((j) => [j.reflection.id, j.relevance, j.why]),
  reason: decision.reason ?? null,
  nearMisses: decision.nearMisses.map((j) => [j.reflection.id, j.relevance]),
});

test('on both evaluation sets, with scopes and held reflections, a reused search decides what a fresh one does', async () => {
  const world = await openWorld();
  try {
    const agent = world.agent;
    for (const [i, set] of [CALIBRATION_SET, BLIND_SET].entries()) {
      // The blind set's reflections belong to a project: a request elsewhere must not see them, reused or not.
      const scope = i === 1 ? { scope: 'pawpath' } : {};
      const proposed = set.REFLECTIONS.map(({ kind, topic, content, id }) => ({ kind, topic, content, tags: [...(set.REFLECTION_TAGS[id] ?? [])] }));
      await world.writer.write(agent.id, proposed, 'conversation', scope);
    }
    assert.ok(typeof world.reflections.version === 'function', 'the SQLite store has versions');
    const reusing = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const fresh = createRetrieval({ reflections: unversioned(world.reflections), embedder: world.embedder });
    const requests = [CALIBRATION_SET, BLIND_SET].flatMap((set) => [...set.NEEDING, ...set.UNRELATED].map((r) => r.text));
    const places: Array<Visibility | undefined> = [undefined, {}, { scope: 'pawpath' }, { scope: 'elsewhere', user: 'u1' }];
    let compared = 0;
    let taken = 0;
    for (const text of requests) {
      for (const visible of places) {
        const first = await reusing.decide(agent, text, new Set(), visible);
        const again = await reusing.decide(agent, text, new Set(), visible);
        const expected = said(await fresh.decide(agent, text, new Set(), visible));
        assert.equal(said(first), expected, text);
        assert.equal(said(again), expected, `${text} (reused)`);
        // The conversation holds what the first turn took: the next search asks for more and leaves those out.
        const held = new Set(first.taken.map((j) => j.reflection.id));
        assert.equal(said(await reusing.decide(agent, text, held, visible)), said(await fresh.decide(agent, text, held, visible)), `${text} (held)`);
        compared++;
        taken += first.taken.length;
      }
    }
    assert.is(compared, requests.length * places.length);
    assert.ok(taken > 0, 'the sets inject something');
  } finally {
    await world.dispose();
  }
});

test('a write between two searches of the same text is seen by the second: new, changed and deleted reflections', async () => {
  const world = await openWorld();
  try {
    const agent = world.agent;
    const retrieval = createRetrieval({ reflections: world.reflections, embedder: world.embedder });
    const ask = 'Where does the payments service keep its configuration?';
    const before = world.reflections.version ? await world.reflections.version(agent.id) : undefined;
    assert.equal((await retrieval.decide(agent, ask, new Set())).taken, []);

    const { stored } = await world.writer.write(agent.id, [{ kind: 'factual', topic: 'payments', content: 'The payments service keeps its configuration in config/payments.yaml.' }], 'mcp');
    assert.is.not(await world.reflections.version!(agent.id), before, 'a write moves the version');
    const found = await retrieval.decide(agent, ask, new Set());
    assert.equal(found.taken.map((j) => j.reflection.id), [stored[0].id]);

    await world.reflections.markUsed(agent.id, [stored[0].id], Date.now());
    const used = await world.reflections.version!(agent.id);
    assert.equal((await retrieval.decide(agent, ask, new Set())).taken.map((j) => j.reflection.id), [stored[0].id]);
    assert.is(await world.reflections.version!(agent.id), used, 'a use is not a write');

    await world.reflections.update(agent.id, stored[0].id, { content: 'The payments service keeps its configuration in deploy/payments.toml.' });
    assert.match((await retrieval.decide(agent, ask, new Set())).taken[0].reflection.content, 'deploy/payments.toml', 'the changed text, not the one found before');

    assert.ok(await world.reflections.delete(agent.id, stored[0].id));
    assert.equal((await retrieval.decide(agent, ask, new Set())).taken, [], 'deleted: never taken again');
  } finally {
    await world.dispose();
  }
});

test.run();
