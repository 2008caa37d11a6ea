/**
 * The Weaviate reflection store. The pure parts (ids, property mapping, the merge rule,
 * keyword terms, pending uses, the schema check, connection options) are tested here
 * always. The store itself runs the ReflectionStore contract and Weaviate-specific tests
 * against a real Weaviate (1.27+) when ENGRAM_TEST_WEAVIATE_URL is set (REST URL; gRPC on
 * the same host at 50051; ENGRAM_TEST_WEAVIATE_API_KEY if it needs one); each harness
 * gets a fresh collection, dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import weaviate, { generateUuid5, type WeaviateClass } from 'weaviate-client';
import { connectOptions, redactUrl } from '../../../src/adapters/weaviate/connect.js';
import { storeError, WeaviateStoreError } from '../../../src/adapters/weaviate/errors.js';
import { isCollectionName, reflectionUuid, tenantName, uuidV5 } from '../../../src/adapters/weaviate/ids.js';
import {
  dropWeaviateCollection,
  openWeaviateReflectionStore,
  type WeaviateReflectionStore,
} from '../../../src/adapters/weaviate/index.js';
import { keywordTerms } from '../../../src/adapters/weaviate/keyword-terms.js';
import {
  compareForList,
  cosine,
  cosineFromDistance,
  fromProperties,
  laterOf,
  listed,
  mergeUpsert,
  toProperties,
  upsertChanges,
} from '../../../src/adapters/weaviate/mapping.js';
import { PendingUses } from '../../../src/adapters/weaviate/pending-uses.js';
import { collectionConfig, missingProperties, schemaProblems, type ReflectionProperties } from '../../../src/adapters/weaviate/schema.js';
import { hybridSearch } from '../../../src/memory/hybrid-search.js';
import { rejects, unitVector } from '../../contracts/helpers.js';
import { reflection, reflectionStoreContract } from '../../contracts/reflection-store.contract.js';
import { reflection as plainReflection } from '../../memory/fixtures.js';

// ---------------------------------------------------------------------------------------
// Pure helpers: no Weaviate needed.

const helpers = suite('Weaviate adapter helpers');

/** RFC 9562's DNS namespace; `generateUuid5(name)` is uuid v5 of `name` in it. */
const DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

helpers('uuidV5 is RFC UUID v5: a published vector, and the client’s own generateUuid5', () => {
  assert.is(uuidV5('python.org', DNS), '886313e1-3b8a-5372-9b90-0c9aee199e5d');
  for (const name of ['x', 'agt_1/r1', 'ünïcode ✓', '']) assert.is(uuidV5(name, DNS), generateUuid5(name));
});

helpers('reflection UUIDs: stable, version 5, per agent and id, unambiguous', () => {
  const id = reflectionUuid('agt_a', 'r1');
  assert.is(id, reflectionUuid('agt_a', 'r1'));
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is.not(id, reflectionUuid('agt_b', 'r1'));
  assert.is.not(id, reflectionUuid('agt_a', 'r2'));
  assert.is.not(reflectionUuid('a', 'bc'), reflectionUuid('ab', 'c'));
  // Pinned: a changed derivation would duplicate every stored reflection on re-upsert.
  assert.is(reflectionUuid('agt_a', 'r1'), uuidV5('["agt_a","r1"]', '0a7d562b-788d-4f16-9842-445990198649'));
});

helpers('tenant names: agent ids as they are; anything else hashed into Weaviate’s alphabet', () => {
  assert.is(tenantName('agt_3fK9aZ0qW1eR2tY3'), 'agt_3fK9aZ0qW1eR2tY3');
  assert.is(tenantName('agt_contract_a'), 'agt_contract_a');
  const weaviateTenant = /^[A-Za-z0-9_-]{1,64}$/;
  const odd = ['with-hyphen', 'a/b', 'ünï', 'x'.repeat(65), ''];
  const names = odd.map(tenantName);
  for (const name of names) {
    assert.match(name, weaviateTenant);
    assert.ok(name.startsWith('h-'), 'hashed names carry a hyphen, which plain ones never do');
  }
  assert.is(new Set(names).size, odd.length);
  assert.is(tenantName('with-hyphen'), names[0], 'stable');
});

helpers('collection names follow Weaviate’s class names', () => {
  assert.ok(isCollectionName('EngramReflection'));
  assert.ok(isCollectionName('EngramTest_01'));
  for (const bad of ['engramReflection', 'Engram-Reflection', '', '1Engram']) assert.not.ok(isCollectionName(bad), bad);
});

helpers('properties round-trip a reflection; never-used has no lastUsedAt', () => {
  const r = plainReflection({ id: 'r1', agentId: 'agt_a', tags: ['a', 'b'], kind: 'procedural', source: 'mcp' });
  const properties = toProperties(r);
  assert.not.ok('lastUsedAt' in properties, 'absent, not null: the gRPC batch has no null number');
  assert.equal(fromProperties(properties, 'agt_a'), r);
  const used = { ...r, lastUsedAt: 9_000, useCount: 3 };
  assert.equal(fromProperties(toProperties(used), 'agt_a'), used);
  properties.tags.push('c');
  assert.equal(r.tags, ['a', 'b'], 'tags are copied');
});

helpers('properties carry the supersession and the tag author; current and untagged ones write no id or author', () => {
  const current = plainReflection({ id: 'r1', agentId: 'agt_a', tags: ['ci'] });
  const properties = toProperties(current);
  assert.is(properties.superseded, false, 'always written: the filter reads it');
  assert.not.ok('supersededBy' in properties || 'supersededAt' in properties || 'tagsBy' in properties);
  assert.equal(fromProperties(properties, 'agt_a'), current);
  const superseded = { ...current, supersededBy: 'r2', supersededAt: 5_000, tagsBy: 'extraction' as const };
  const stored = toProperties(superseded);
  assert.equal([stored.superseded, stored.supersededBy, stored.supersededAt, stored.tagsBy], [true, 'r2', 5_000, 'extraction']);
  assert.equal(fromProperties(stored, 'agt_a'), superseded);
  assert.is(toProperties({ ...current, supersededBy: 'r2', updatedAt: 7_000 }).supersededAt, 7_000, 'no time: the record’s updatedAt');
  assert.not.ok('supersededAt' in toProperties({ ...current, supersededAt: 9_000 }), 'a time without an id is dropped');
  // What a PATCH leaves behind when it clears them, and what an older release wrote.
  const cleared = fromProperties({ ...stored, superseded: false, supersededBy: '', tagsBy: '' }, 'agt_a');
  assert.not.ok('supersededBy' in cleared || 'supersededAt' in cleared || 'tagsBy' in cleared, 'a stale supersededAt is never read');
  const { superseded: _s, supersededBy: _b, supersededAt: _a, tagsBy: _t, ...older } = stored;
  assert.equal(fromProperties(older, 'agt_a'), current);
  assert.not.ok('tagsBy' in fromProperties({ ...properties, tagsBy: 'robot' }, 'agt_a'), 'an unknown author reads as none');
});

helpers('list filters, as applied to lists read by cursor', () => {
  const current = plainReflection({ id: 'c', kind: 'procedural' });
  const tagged = plainReflection({ id: 't', tagsBy: 'agent' });
  const old = plainReflection({ id: 'o', supersededBy: 'c', supersededAt: 1 });
  const ids = (query: Parameters<typeof listed>[1]) => [current, tagged, old].filter((r) => listed(r, query)).map((r) => r.id);
  assert.equal(ids({}), ['c', 't', 'o']);
  assert.equal(ids({ superseded: true }), ['o']);
  assert.equal(ids({ superseded: false }), ['c', 't']);
  assert.equal(ids({ needsTags: true }), ['c']);
  assert.equal(ids({ needsTags: false }), ['c', 't', 'o']);
  assert.equal(ids({ needsTags: true, kind: 'factual' }), []);
  assert.equal(ids({ kind: 'factual', superseded: true }), ['o']);
  const alpha = plainReflection({ id: 'a', scope: 'alpha' });
  const alice = plainReflection({ id: 'u', user: 'alice' });
  const seen = (query: Parameters<typeof listed>[1]) => [current, alpha, alice].filter((r) => listed(r, query)).map((r) => r.id);
  assert.equal(seen({ visible: {} }), ['c'], 'no scope, no user: only what holds everywhere and is the agent’s');
  assert.equal(seen({ visible: { scope: 'alpha', user: 'bob' } }), ['c', 'a']);
  assert.equal(seen({ visible: { user: 'alice' } }), ['c', 'u']);
  assert.equal(seen({ scope: 'alpha' }), ['a']);
  assert.equal(seen({ scope: null }), ['c', 'u']);
  assert.equal(seen({ user: null }), ['c', 'a']);
});

helpers('properties carry the scope and user, with the booleans filters read; none writes empty and false', () => {
  const both = plainReflection({ id: 'r1', agentId: 'agt_a', scope: 'alpha-shop', user: 'alice' });
  const stored = toProperties(both);
  assert.equal([stored.scope, stored.scoped, stored.user, stored.personal], ['alpha-shop', true, 'alice', true]);
  assert.equal(fromProperties(stored, 'agt_a'), both);
  const none = toProperties(plainReflection({ id: 'r2' }));
  assert.equal([none.scope, none.scoped, none.user, none.personal], ['', false, '', false]);
  const { scope: _s, scoped: _d, user: _u, personal: _p, ...older } = none;
  assert.not.ok('scope' in fromProperties(older, 'agt_a') || 'user' in fromProperties(older, 'agt_a'), 'older objects hold everywhere and are the agent’s');
});

helpers('properties are read defensively: partial or odd objects still make reflections', () => {
  const r = fromProperties({ reflectionId: 'r1', kind: 'weird', tags: ['ok', 3], useCount: BigInt(4) }, 'agt_a');
  assert.equal(r, {
    id: 'r1',
    agentId: 'agt_a',
    kind: 'factual',
    content: '',
    topic: '',
    tags: ['ok'],
    source: 'conversation',
    createdAt: 0,
    updatedAt: 0,
    lastUsedAt: null,
    useCount: 4,
    embedderId: '',
  });
});

helpers('merge rule: content replaced; earliest createdAt, larger useCount, later lastUsedAt kept', () => {
  const stored = plainReflection({ id: 'r1', createdAt: 1_000, useCount: 5, lastUsedAt: 9_000, topic: 'ci' });
  const incoming = plainReflection({
    id: 'r1',
    content: 'new',
    kind: 'procedural',
    topic: 'ci-checks',
    tags: ['tsc'],
    source: 'transcript',
    embedderId: 'other',
    createdAt: 4_000,
    updatedAt: 4_000,
    useCount: 0,
    lastUsedAt: null,
  });
  assert.equal(mergeUpsert(stored, incoming), { ...incoming, createdAt: 1_000, useCount: 5, lastUsedAt: 9_000 });
  assert.equal(mergeUpsert(undefined, incoming), incoming);
  const again = mergeUpsert(stored, { ...incoming, createdAt: 500, useCount: 7, lastUsedAt: 2_000 });
  assert.equal([again.createdAt, again.useCount, again.lastUsedAt], [500, 7, 9_000]);
  assert.is(laterOf(null, null), null);
  assert.is(laterOf(null, 3), 3);
  assert.is(laterOf(5, null), 5);
});

helpers('an upsert PATCHes the replaced fields, and a counter only where the incoming one wins', () => {
  const stored = plainReflection({ id: 'r1', createdAt: 1_000, useCount: 5, lastUsedAt: 9_000, tags: ['a'] });
  const relearned = mergeUpsert(stored, plainReflection({ id: 'r1', content: 'new', createdAt: 4_000, updatedAt: 4_000 }));
  assert.equal(upsertChanges(stored, relearned), {
    kind: 'factual',
    content: 'new',
    topic: 'general',
    tags: [],
    terms: 'new general',
    source: 'conversation',
    updatedAt: 4_000,
    embedderId: 'local-hash-v1-256',
    origin: '',
    superseded: false,
    supersededBy: '',
    tagsBy: '',
    scope: '',
    scoped: false,
    user: '',
    personal: false,
  });
  const superseding = mergeUpsert(stored, plainReflection({ id: 'r1', supersededBy: 'r2', tagsBy: 'agent', updatedAt: 6_000 }));
  assert.equal(
    [upsertChanges(stored, superseding)].map((c) => [c.superseded, c.supersededBy, c.supersededAt, c.tagsBy]),
    [[true, 'r2', 6_000, 'agent']],
    'an upsert replaces them like the content',
  );
  const imported = mergeUpsert(stored, plainReflection({ id: 'r1', createdAt: 500, useCount: 7, lastUsedAt: 12_000 }));
  const changes = upsertChanges(stored, imported);
  assert.equal([changes.createdAt, changes.useCount, changes.lastUsedAt], [500, 7, 12_000]);
  const neverUsed = plainReflection({ id: 'r1' });
  assert.not.ok('lastUsedAt' in upsertChanges(neverUsed, mergeUpsert(neverUsed, neverUsed)));
});

helpers('cosine: unit vectors, mismatched and zero vectors; Weaviate distance', () => {
  const x = unitVector(4, { 0: 1 });
  assert.ok(Math.abs(cosine(x, [1, 0, 0, 0]) - 1) < 1e-9);
  assert.ok(Math.abs(cosine(x, unitVector(4, { 0: 1, 1: 1 })) - Math.SQRT1_2) < 1e-6);
  assert.is(cosine(x, [0, 1, 0, 0]), 0);
  assert.ok(Math.abs(cosine(x, [-2, 0, 0, 0]) + 1) < 1e-9, 'not assumed unit length');
  assert.is(cosine(x, [1, 0]), 0, 'another embedder');
  assert.is(cosine(x, [0, 0, 0, 0]), 0);
  assert.is(cosineFromDistance(0), 1);
  assert.is(cosineFromDistance(2), -1);
});

helpers('list order: most recently updated first (or least, oldestFirst), then by id', () => {
  const rs = [
    plainReflection({ id: 'b', updatedAt: 1 }),
    plainReflection({ id: 'a', updatedAt: 1 }),
    plainReflection({ id: 'c', updatedAt: 5 }),
  ];
  assert.equal(rs.sort((x, y) => compareForList(x, y)).map((r) => r.id), ['c', 'a', 'b']);
  assert.equal(rs.sort((x, y) => compareForList(x, y, true)).map((r) => r.id), ['a', 'b', 'c']);
});

helpers('keyword terms: the stems the embedded store uses, distinct, capped; operators and quotes inert', () => {
  assert.equal(keywordTerms('How do we handle kubernetes?'), ['handl', 'kubernet']);
  assert.equal(keywordTerms('"unbalanced'), ['unbalanc']);
  assert.equal(keywordTerms('NEAR(a b, 3)'), ['near']);
  assert.equal(keywordTerms('col:value'), ['col', 'valu']);
  assert.equal(keywordTerms('-- ; DROP TABLE x'), ['drop', 'tabl']);
  for (const none of ['', '   ', '?!.,;', '*', '"" \'\' ()', 'a AND OR NOT', 'the of and']) {
    assert.equal(keywordTerms(none), [], none);
  }
  assert.equal(keywordTerms('Redis redis REDIS'), ['redi']);
  assert.equal(keywordTerms('Café déjà-vu'), ['cafe', 'deja', 'vu'], 'diacritics removed, as the embedded store removes them');
  assert.is(keywordTerms(Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ')).length, 32);
});

helpers('pending uses: counted at once, not twice once written, put back on failure', () => {
  const uses = new PendingUses();
  assert.ok(uses.empty);
  uses.add('agt_a', ['r1', 'r1', 'r2'], 10);
  uses.add('agt_a', ['r1'], 5);
  assert.equal(uses.unseen('agt_a', 'r1', 0), { count: 2, at: 10 }, 'one use per call, latest at');
  assert.is(uses.unseen('agt_b', 'r1', 0), undefined);

  const taken = uses.take();
  assert.ok(uses.empty);
  assert.equal(uses.unseen('agt_a', 'r1', 0), { count: 2, at: 10 }, 'in flight, not yet written: still added');
  const r1 = taken.find((u) => u.id === 'r1')!;
  r1.target = 7; // the write read 5 and writes 7
  assert.equal(uses.unseen('agt_a', 'r1', 5), { count: 2, at: 10 }, 'read before the write landed');
  assert.is(uses.unseen('agt_a', 'r1', 7), undefined, 'read after it: not counted twice');
  uses.add('agt_a', ['r1'], 20);
  assert.equal(uses.unseen('agt_a', 'r1', 7), { count: 1, at: 20 });

  assert.ok(uses.restore(r1));
  assert.equal(uses.unseen('agt_a', 'r1', 7), { count: 3, at: 20 }, 'a failed write is pending again');
  uses.settle(taken.find((u) => u.id === 'r2')!);
  assert.is(uses.unseen('agt_a', 'r2', 0), undefined);

  const [again] = uses.take();
  uses.dropAgent('agt_a');
  assert.not.ok(uses.restore(again), 'a deleted agent’s uses are never put back');
  assert.ok(uses.empty);
  assert.is(uses.unseen('agt_a', 'r1', 0), undefined);
});

/** The schema Weaviate reports for a collection made from `collectionConfig` (abridged). */
function reportedSchema(): WeaviateClass {
  return {
    class: 'Any',
    multiTenancyConfig: { enabled: true, autoTenantCreation: true, autoTenantActivation: true },
    properties: (collectionConfig('Any').properties ?? []).map((p) => ({
      name: p.name,
      dataType: [p.dataType],
      indexFilterable: p.indexFilterable ?? true,
      indexSearchable: p.indexSearchable ?? false,
      tokenization: p.tokenization,
    })),
    vectorConfig: {
      default: { vectorizer: { none: {} }, vectorIndexType: 'hnsw', vectorIndexConfig: { distance: 'cosine', ef: -1 } },
    },
  };
}

helpers('schema check: the created schema fits; a collection that cannot hold reflections is explained', () => {
  assert.equal(schemaProblems(reportedSchema()), []);
  assert.equal(schemaProblems({ ...reportedSchema(), multiTenancyConfig: undefined }), ['multi-tenancy is not enabled']);
  assert.equal(schemaProblems({ ...reportedSchema(), vectorConfig: undefined }), ['it has no vector named "default"']);
  const dot = reportedSchema();
  dot.vectorConfig!.default.vectorIndexConfig = { distance: 'dot' };
  assert.equal(schemaProblems(dot), ['vector "default" uses dot distance, not cosine']);
  const old = reportedSchema();
  old.properties = old.properties!.filter((p) => p.name !== 'embedderId');
  old.properties.find((p) => p.name === 'useCount')!.dataType = ['number'];
  old.properties.find((p) => p.name === 'terms')!.tokenization = 'word';
  assert.equal(schemaProblems(old), [
    'property terms is tokenised as word, not whitespace',
    'property useCount is number, not int',
    'property embedderId is missing',
  ]);
  const older = reportedSchema();
  older.properties = older.properties!.filter((p) => !['superseded', 'supersededBy', 'supersededAt', 'tagsBy'].includes(p.name ?? ''));
  assert.equal(missingProperties(older).map((p) => p.name), ['superseded', 'supersededBy', 'supersededAt', 'tagsBy'], 'added at open');
  assert.equal(missingProperties(reportedSchema()), []);
  const unsearchable = reportedSchema();
  unsearchable.properties!.find((p) => p.name === 'terms')!.indexSearchable = false;
  assert.equal(schemaProblems(unsearchable), ['property terms is not searchable by keywords']);
});

helpers('connection options from a URL: ports, TLS, path, gRPC, API key', () => {
  const plain = connectOptions({ url: 'http://weaviate:8080' });
  assert.equal(
    { ...plain, timeout: undefined },
    {
      httpHost: 'weaviate',
      httpPort: 8080,
      httpSecure: false,
      grpcHost: 'weaviate',
      grpcPort: 50051,
      grpcSecure: false,
      timeout: undefined,
    },
  );
  assert.equal(plain.timeout, { query: 10, insert: 30, init: 5 });
  const tls = connectOptions({ url: 'https://db.example.com/weaviate/', apiKey: 'k', grpcHost: 'grpc.example.com', grpcPort: 443 });
  assert.equal(
    [tls.httpPort, tls.httpSecure, tls.httpPath, tls.grpcHost, tls.grpcPort, tls.grpcSecure],
    [443, true, '/weaviate', 'grpc.example.com', 443, true],
  );
  assert.ok(tls.authCredentials instanceof weaviate.ApiKey);
  assert.is(connectOptions({ url: 'http://h' }).httpPort, 80);
  assert.is(connectOptions({ url: 'http://h:1', timeoutSeconds: { query: 2 } }).timeout?.query, 2);
  assert.is(connectOptions({ url: 'http://h' }).authCredentials, undefined);
  assert.throws(() => connectOptions({ url: 'weaviate:8080/x' }), /http or https/);
  assert.throws(
    () => connectOptions({ url: 'not a url with key-123' }),
    (error: Error) => /not a valid URL/.test(error.message) && !error.message.includes('key-123'),
  );
  assert.is(redactUrl('https://user:pw@host:8443/p/?q=secret#x'), 'https://host:8443/p');
});

helpers('errors name Weaviate and the operation, and never carry the API key', () => {
  const cause = new Error('denied for key sk-123 at host');
  const error = storeError('keywords', cause, ['sk-123']);
  assert.instance(error, WeaviateStoreError);
  assert.is(error.message, 'Weaviate reflection store: keywords failed: denied for key [redacted] at host');
  assert.is(error.cause, undefined, 'a cause that held the key is not kept');
  assert.is(storeError('get', new Error('boom')).cause instanceof Error, true);
  assert.is(storeError('x', error), error, 'not wrapped twice');
});

helpers('an unreachable Weaviate fails to open with an error naming Weaviate, without the key', async () => {
  // Port 9 (discard) on loopback: connection refused at once, no server needed.
  const error = await rejects(
    () => openWeaviateReflectionStore({ url: 'http://127.0.0.1:9', grpcPort: 9, apiKey: 'sk-never-shown' }),
    /^Weaviate reflection store: connect to http:\/\/127\.0\.0\.1:9 failed/,
  );
  assert.not.ok(String((error as Error).message).includes('sk-never-shown'));
  await rejects(() => openWeaviateReflectionStore({ url: 'http://127.0.0.1:9', collection: 'lowercase' }), /must match/);
});

helpers.run();

// ---------------------------------------------------------------------------------------
// Against a real Weaviate.

const url = process.env.ENGRAM_TEST_WEAVIATE_URL;
const apiKey = process.env.ENGRAM_TEST_WEAVIATE_API_KEY || undefined;

if (!url) {
  console.log('Weaviate reflection store contract: skipped (set ENGRAM_TEST_WEAVIATE_URL to run it against a real Weaviate)');
} else {
  const connection = { url, apiKey };
  const freshName = (): string => `EngramTest${randomBytes(6).toString('hex')}`;
  const open = (collection: string): Promise<WeaviateReflectionStore> =>
    openWeaviateReflectionStore({ ...connection, collection, usageFlushMs: 50 });

  reflectionStoreContract('weaviate', async () => {
    const collection = freshName();
    const store = await open(collection);
    return {
      store,
      cleanup: async () => {
        await store.close();
        await dropWeaviateCollection({ ...connection, collection });
      },
    };
  });

  interface Opened {
    collections: string[];
    stores: WeaviateReflectionStore[];
  }
  const specifics = suite<Opened>('WeaviateReflectionStore specifics', { collections: [], stores: [] });
  specifics.before.each((context) => {
    context.collections = [];
    context.stores = [];
  });
  specifics.after.each(async (context) => {
    for (const store of context.stores) await store.close();
    for (const collection of context.collections) await dropWeaviateCollection({ ...connection, collection });
  });
  const openIn = async (context: Opened, collection = freshName()) => {
    if (!context.collections.includes(collection)) context.collections.push(collection);
    const store = await open(collection);
    context.stores.push(store);
    return store;
  };
  const A = 'agt_weaviate_a';
  const B = 'agt_weaviate_b';
  const axis = (i: number): Float32Array => unitVector(8, { [i]: 1 });

  specifics('deleteAgent removes the tenant; the agent starts empty and stays isolated', async (context) => {
    const store = await openIn(context);
    await store.upsert([reflection(A, 'a1', 'alpha secret', 0), reflection(B, 'b1', 'bravo alpha', 0)]);
    await store.markUsed(A, ['a1'], 5_000);
    await store.deleteAgent(A);
    assert.is(await store.count(A), 0);
    assert.is(await store.get(A, 'a1'), undefined);
    assert.equal(await store.keywords(A, { text: 'alpha', limit: 5 }), []);
    assert.equal(await store.nearest(A, { vector: axis(0), limit: 5 }), []);
    assert.is(await store.delete(A, 'a1'), false);
    await store.flush(); // the dropped use writes nothing and reports nothing
    await store.upsert([reflection(A, 'a2', 'alpha again', 1)]);
    assert.equal((await store.list(A)).map((r) => [r.id, r.useCount]), [['a2', 0]]);
    const found = await hybridSearch(store, B, { text: 'alpha', vector: axis(1), limit: 5 });
    assert.equal(found.map((r) => r.reflection.id), ['b1']);
    assert.equal((await store.list(B)).map((r) => r.id), ['b1']);
  });

  specifics('a collection created by another instance is reused, data and uses included', async (context) => {
    const first = await openIn(context);
    await first.upsert([reflection(A, 'r1', 'shared reflection', 0)]);
    const second = await openIn(context, first.collection);
    assert.is((await second.get(A, 'r1'))?.content, 'shared reflection');
    await first.markUsed(A, ['r1'], 7_000);
    assert.is((await first.get(A, 'r1'))?.useCount, 1, 'the recording store sees the use at once');
    await first.flush();
    const seen = await second.get(A, 'r1');
    assert.equal([seen?.useCount, seen?.lastUsedAt], [1, 7_000], 'the other sees it once written');
    await second.update(A, 'r1', { content: 'updated by the second' });
    assert.is((await first.get(A, 'r1'))?.content, 'updated by the second');
  });

  specifics('two instances starting together create the collection once', async (context) => {
    const collection = freshName();
    const [one, two] = await Promise.all([openIn(context, collection), openIn(context, collection)]);
    await one.upsert([reflection(A, 'r1', 'one', 0)]);
    assert.is(await two.count(A), 1);
  });

  specifics('an existing collection that cannot hold reflections is refused with the reason', async (context) => {
    const collection = freshName();
    context.collections.push(collection);
    const client = await weaviate.connectToCustom(connectOptions(connection));
    try {
      await client.collections.create({ name: collection });
    } finally {
      await client.close();
    }
    await rejects(() => open(collection), /Weaviate reflection store: open collection .*multi-tenancy is not enabled/);
  });

  specifics('a collection from before supersession gains its properties; its objects are current and untagged', async (context) => {
    const collection = freshName();
    context.collections.push(collection);
    const later = new Set<string>(['superseded', 'supersededBy', 'supersededAt', 'tagsBy']);
    const client = await weaviate.connectToCustom(connectOptions(connection));
    try {
      // The collection and an object as a release before these properties made them.
      const config = collectionConfig(collection);
      await client.collections.create<ReflectionProperties, string>({
        ...config,
        properties: (config.properties ?? []).filter((p) => !later.has(p.name)),
      });
      const objects = client.collections.use<string, ReflectionProperties>(collection).withTenant(tenantName(A));
      await objects.tenants.create([{ name: tenantName(A) }]);
      const { superseded: _s, ...older } = toProperties(plainReflection({ id: 'old', agentId: A, content: 'The queue is rabbitmq' }));
      await objects.data.insert({ id: reflectionUuid(A, 'old'), properties: older, vectors: { default: Array.from(axis(0)) } });
    } finally {
      await client.close();
    }
    const store = await openIn(context, collection);
    assert.equal((await store.nearest(A, { vector: axis(0), limit: 5 })).map((m) => m.id), ['old'], 'nearest finds it');
    assert.equal((await store.keywords(A, { text: 'rabbitmq', limit: 5 })).map((m) => m.id), ['old'], 'keywords find it');
    assert.equal((await store.list(A, { superseded: false })).map((r) => r.id), ['old']);
    assert.equal(await store.list(A, { superseded: true }), []);
    assert.equal((await store.list(A, { needsTags: true })).map((r) => r.id), ['old']);
    await store.upsert([reflection(A, 'new', 'The queue is nats', 1, { tags: ['queue'], tagsBy: 'agent' })]);
    await store.update(A, 'old', { supersededBy: 'new' });
    assert.equal((await store.nearest(A, { vector: axis(0), limit: 5 })).map((m) => m.id), ['new']);
    assert.equal((await store.list(A, { superseded: true })).map((r) => r.id), ['old']);
    assert.equal(await store.list(A, { needsTags: true }), []);
  });

  specifics('list pages past the query maximum with the cursor, in the same order', async (context) => {
    const collection = freshName();
    context.collections.push(collection);
    const store = await openWeaviateReflectionStore({ ...connection, collection, maxQueryResults: 3 });
    context.stores.push(store);
    await store.upsert(
      ['a', 'b', 'c', 'd', 'e'].map((id, i) =>
        reflection(A, id, `r ${id}`, i, { updatedAt: 1_000 + (i % 2), kind: i === 4 ? 'procedural' : 'factual' }),
      ),
    );
    assert.equal((await store.list(A)).map((r) => r.id), ['b', 'd', 'a', 'c', 'e']);
    assert.equal((await store.list(A, { limit: 2, offset: 2 })).map((r) => r.id), ['a', 'c']);
    assert.equal((await store.list(A, { limit: 2 })).map((r) => r.id), ['b', 'd'], 'within the maximum: sorted by Weaviate');
    assert.equal((await store.list(A, { kind: 'procedural' })).map((r) => r.id), ['e']);
    await store.update(A, 'b', { supersededBy: 'a' });
    await store.update(A, 'c', { tagsBy: 'person' });
    assert.equal((await store.list(A, { superseded: true })).map((r) => r.id), ['b'], 'filtered here past the maximum');
    assert.equal((await store.list(A, { needsTags: true })).map((r) => r.id).sort(), ['a', 'd', 'e']);
  });

  specifics.run();
}
