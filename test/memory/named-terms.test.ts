/**
 * Named terms (DESIGN section 6): what a text names, how specific each term is, and what
 * they do to injection through the real store, embedder and word vectors.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadWordVectors } from '../../src/adapters/embeddings/word-vectors-file.js';
import { termForms } from '../../src/memory/term-forms.js';
import { stem } from '../../src/memory/keywords.js';
import type { Agent, Reflection } from '../../src/domain/types.js';
import { createSemanticEmbedder } from '../../src/memory/embedders/semantic-embedder.js';
import { likenessIn, nameLikeness, namedQuery, probeTerms, rarityAmong, strongestNamedTerm } from '../../src/memory/named-terms.js';
import { createReflectionWriter } from '../../src/memory/reflection-writer.js';
import { createSoftMatchReranker } from '../../src/memory/rerank.js';
import { createRetrieval, type Retrieval } from '../../src/memory/retrieval.js';
import { openWorld } from './sqlite-world.js';

const words = loadWordVectors();
const likeness = likenessIn(words);

test('identifiers keep their words, whatever their punctuation; dates, numbers and abbreviations are not identifiers', () => {
  const forms = termForms(
    'Run `pnpm db:migrate` in services/api-gateway; env vars live in .env.local (MAPBOX_TOKEN), see TW-4031 and useQuery. Not 14:00, 2024-03-01, e.g. or on-call.',
  );
  const found = Object.fromEntries(forms.identifiers.map((i) => [i.text, { words: i.words.join(' '), codeLike: i.codeLike }]));
  assert.equal(found['db:migrate'], { words: 'db migrate', codeLike: true });
  assert.equal(found['services/api-gateway'], { words: 'services api gateway', codeLike: true });
  assert.equal(found['.env.local'], { words: 'env local', codeLike: true });
  assert.equal(found.MAPBOX_TOKEN, { words: 'mapbox token', codeLike: true });
  assert.equal(found['TW-4031'], { words: 'tw 4031', codeLike: true });
  assert.equal(found.useQuery, { words: 'use query', codeLike: true });
  assert.equal(found['on-call'], { words: 'on call', codeLike: false }, 'a dashed compound word is an identifier, but not code-like');
  for (const text of ['14:00', '2024-03-01', 'e.g']) assert.not.ok(found[text], text);
});

test('words remember whether a sentence writes them capitalised, and whether they stand alone', () => {
  const forms = termForms('Errors go to Sentry. Staging secrets are in Vault; run ./scripts/rollback.sh to roll back.');
  assert.ok(forms.words.get(stem('sentry'))!.capitalised, 'Sentry inside a sentence');
  assert.ok(forms.words.get(stem('vault'))!.capitalised);
  assert.not.ok(forms.words.get(stem('errors'))!.capitalised, 'a sentence’s first word says nothing');
  assert.not.ok(forms.words.get(stem('staging'))!.capitalised, 'nor does the first word after a full stop');
  assert.not.ok(forms.words.get(stem('rollback'))!.standalone, 'rollback only inside the path');
  assert.ok(forms.words.get(stem('roll'))!.standalone);
});

test('how name-like a word is: everyday words are not, rare and unknown ones are; numbers only when they look like ports or codes', () => {
  for (const word of ['install', 'tests', 'the', 'deploy', 'build']) assert.ok(nameLikeness(word, words) < 0.5, word);
  for (const word of ['the', 'tests', 'build']) assert.is(nameLikeness(word, words), 0, word);
  for (const word of ['pnpm', 'kubectl', 'quasar', 'buildkite']) assert.is(nameLikeness(word, words), 1, word);
  assert.ok(nameLikeness('sentry', words) > 0.9, 'a rare English word');
  assert.is(nameLikeness('5432', words), 0.6);
  assert.is(nameLikeness('10', words), 0);
  assert.is(nameLikeness('2024', words), 0, 'a year');
  assert.is(nameLikeness('pnpm', undefined), 0, 'without word vectors a plain word says nothing');
  assert.is(rarityAmong(1), 1);
  assert.is(rarityAmong(3), 1);
  assert.ok(rarityAmong(8) > 0 && rarityAmong(8) < 1);
  assert.is(rarityAmong(20), 0, 'a term most reflections hold names none of them');
});

test('the strongest named term a request shares with a reflection', () => {
  const reflection = termForms('Billing-svc is owned by Marta Okafor; releases use ./scripts/rollback.sh and the quasar repo uses pnpm.');
  const few = () => 1;
  const named = (request: string) => strongestNamedTerm(namedQuery(request), reflection, few, likeness);
  assert.equal(named('who owns the billing svc?'), { term: 'Billing-svc', strength: 1 }, 'an identifier said in prose');
  assert.equal(named('How do I install deps in quasar?')?.term, 'quasar');
  assert.is(named('How do I install deps in quasar?')?.strength, 1);
  assert.equal(named('ask marta about it'), { term: 'Marta', strength: 0.8 }, 'a proper name, written capitalised in the reflection');
  assert.is(named('what does ROLLBACK do in a transaction?')?.strength, 0.5, 'a bare word the reflection holds only inside a path is weaker');
  assert.is(named('how do I install the tests?'), undefined, 'everyday words shared by chance name nothing');
  const common = strongestNamedTerm(namedQuery('How do I install deps in quasar?'), reflection, () => 20, likeness);
  assert.is(common?.strength ?? 0, 0, 'a term most of the agent’s reflections hold');
});

test('probe terms: the request’s identifiers and name-like words, not its everyday ones', () => {
  const probes = probeTerms(namedQuery('How do I install deps in quasar? `pnpm db:migrate` fails on Sentry.'), likeness);
  for (const term of ['quasar', 'pnpm', 'db', 'migrat', 'sentri']) assert.ok(probes.includes(term), `${term} in ${probes.join(' ')}`);
  for (const term of ['instal', 'fail']) assert.not.ok(probes.includes(term), term);
});

const embedder = createSemanticEmbedder(words);
const reranker = createSoftMatchReranker(words);

async function agentWith(memories: Array<{ kind: string; content: string; topic: string; tags?: string[] }>) {
  const world = await openWorld();
  const writer = createReflectionWriter({ reflections: world.reflections, embedder, control: world.control, now: () => world.clock.now });
  const { stored } = await writer.write(world.agent.id, memories, 'conversation');
  assert.is(stored.length, memories.length);
  const retrieval = createRetrieval({ reflections: world.reflections, embedder, reranker, vocabulary: words });
  return { world, retrieval };
}

const injected = async (retrieval: Retrieval, agent: Agent, query: string): Promise<Reflection[]> =>
  (await retrieval.retrieve(agent, query, new Set())).map((judged) => judged.reflection);

test('a request naming the repository gets the reflection about it, learnt with the tags extraction writes; an unrelated one does not', async () => {
  const pnpm = {
    kind: 'procedural',
    content: 'Use pnpm not npm in the quasar repo.',
    topic: 'tooling',
    tags: ['install dependencies', 'package manager', 'npm vs pnpm', 'lockfile conflicts'],
  };
  const { world, retrieval } = await agentWith([pnpm]);
  try {
    for (const request of ['How do I install deps in quasar?', 'install packages for quasar', 'which package manager for quasar?', 'How do I install dependencies in the quasar repo?']) {
      const found = await retrieval.retrieve(world.agent, request, new Set());
      assert.equal(found.map((j) => j.reflection.content), [pnpm.content], request);
      assert.is(found[0].named?.term, 'quasar', request);
    }
    for (const request of ['Write a haiku about autumn leaves.', 'What is the capital of France?']) {
      assert.equal(await injected(retrieval, world.agent, request), [], request);
    }
  } finally {
    await world.dispose();
  }
});

test('a named term lifts its reflection over the bar where meaning alone falls short; `why` says so', async () => {
  const { world, retrieval } = await agentWith([
    { kind: 'factual', content: 'Errors are reported to Sentry: project tidewater-api for the backend; the release name is the git SHA.', topic: 'observability' },
    { kind: 'factual', content: 'Local dev ports: api-gateway listens on 8080 and Postgres on 5433.', topic: 'local development' },
    { kind: 'procedural', content: 'Run database migrations with make migrate before npm test.', topic: 'testing' },
  ]);
  try {
    const judged = await retrieval.judge(world.agent, 'Which Sentry project do backend exceptions go to?', new Set());
    const sentry = judged.find((j) => j.reflection.content.includes('Sentry'))!;
    assert.ok(sentry.relevant, JSON.stringify(sentry));
    assert.is(sentry.named?.term, 'Sentry');
    const bar = { ...world.agent, memory: { ...world.agent.memory, minScore: sentry.cosine - (embedder.relevance!.minCosine - 0.2) + 0.01 } };
    const lifted = (await retrieval.judge(bar, 'Which Sentry project do backend exceptions go to?', new Set())).find((j) => j.reflection.id === sentry.reflection.id)!;
    assert.ok(lifted.relevant, 'over a bar its cosine alone misses');
    assert.is(lifted.why, 'named');
    assert.equal(await injected(retrieval, world.agent, 'Can you recommend a good novel to read on holiday?'), []);
  } finally {
    await world.dispose();
  }
});

test('a reflection naming a term the request mentions once, among many words other reflections share, is still judged', async () => {
  const filler = Array.from({ length: 8 }, (_, i) => `the frontend bundle module ${i} compiled by build step ${i}`).join(', ');
  const { world, retrieval } = await agentWith([
    { kind: 'procedural', content: 'Deploy with ./deploy/run.sh --env staging; never push to the release branch by hand.', topic: 'deployment' },
    ...Array.from({ length: 30 }, (_, i) => ({ kind: 'factual', content: `The frontend bundle module ${i} is compiled by the build step ${i}.`, topic: 'build' })),
  ]);
  try {
    const judged = await retrieval.judge(world.agent, `${filler}, then ./deploy/run.sh printed nothing. Why?`, new Set());
    assert.ok(judged.some((j) => j.reflection.content.startsWith('Deploy with ./deploy/run.sh')), 'the named reflection is among the candidates');
  } finally {
    await world.dispose();
  }
});

test.run();
