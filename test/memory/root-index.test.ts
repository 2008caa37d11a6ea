import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildRootIndex, rebuildRootIndex } from '../../src/memory/root-index.js';
import type { Reflection } from '../../src/domain/types.js';
import { reflection } from './fixtures.js';
import { openWorld } from './sqlite-world.js';

test('an empty store gives a short valid text', () => {
  const text = buildRootIndex([]);
  assert.ok(text.startsWith('# Memory index\n'));
  assert.match(text, /No memories yet/);
});

test('groups by topic, largest first; procedural, most used, newest first inside', () => {
  const reflections: Reflection[] = [
    reflection({ id: 'ref_a', topic: 'billing', content: 'Alice owns billing.' }),
    reflection({ id: 'ref_b', topic: 'deployment', content: 'Deploy script is tools/deploy.sh.', useCount: 1 }),
    reflection({ id: 'ref_c', topic: 'deployment', content: 'Staging is at staging.example.com.', useCount: 5 }),
    reflection({ id: 'ref_d', topic: 'deployment', kind: 'procedural', content: 'Dry-run before deploying.' }),
    reflection({ id: 'ref_e', topic: 'deployment', content: 'Prod deploys need approval.', useCount: 1, updatedAt: 2_000 }),
    reflection({ id: 'ref_f', topic: 'api', content: 'The API is versioned under /v2.' }),
  ];
  assert.is(
    buildRootIndex(reflections),
    [
      '# Memory index',
      '',
      '6 reflections (1 procedural, 5 factual) in 3 topics. Procedural ones (how to avoid mistakes) and the most used come first.',
      '',
      '## deployment (4)',
      '- [procedural] Dry-run before deploying.',
      '- [factual] Staging is at staging.example.com.',
      '- [factual] Prod deploys need approval.',
      '- [factual] Deploy script is tools/deploy.sh.',
      '',
      '## api (1)',
      '- [factual] The API is versioned under /v2.',
      '',
      '## billing (1)',
      '- [factual] Alice owns billing.',
      '',
    ].join('\n'),
  );
});

test('is deterministic whatever the input order', () => {
  const reflections = Array.from({ length: 40 }, (_, i) =>
    reflection({ id: `ref_${i}`, topic: `topic ${i % 7}`, kind: i % 3 ? 'factual' : 'procedural', content: `Fact number ${i}.` }),
  );
  assert.is(buildRootIndex([...reflections].reverse()), buildRootIndex(reflections));
});

test('truncates long lines and keeps each on one line', () => {
  const text = buildRootIndex([reflection({ id: 'ref_1', content: 'word '.repeat(100) + '\nsecond line' })]);
  const line = text.split('\n').find((l) => l.startsWith('- '));
  assert.ok(line && line.length <= 140, line);
  assert.ok(line?.endsWith('…'));
});

test('stops at the size cap and lists the rest as "topic (N more)"', () => {
  const reflections = Array.from({ length: 300 }, (_, i) =>
    reflection({ id: `ref_${String(i).padStart(3, '0')}`, topic: `topic ${String(i % 12).padStart(2, '0')}`, content: `Reflection ${i}: ${'detail '.repeat(8)}` }),
  );
  const text = buildRootIndex(reflections, { maxChars: 3000 });
  assert.ok(text.length <= 3000 + 40, String(text.length));
  assert.match(text, /\n## More topics\n/);
  assert.match(text, /^- topic \d\d \(\d+ more\)$/m);
  // Every reflection is accounted for: listed, or counted in a "more" line.
  const listed = text.split('\n').filter((l) => l.startsWith('- [')).length;
  const more = [...text.matchAll(/\((\d+) more\)/g)].reduce((n, m) => n + Number(m[1]), 0);
  assert.is(listed + more, 300);
});

test('a huge number of topics ends with a summary line within the cap', () => {
  const reflections = Array.from({ length: 2000 }, (_, i) => reflection({ id: `ref_${i}`, topic: `topic-${i}` }));
  const text = buildRootIndex(reflections, { maxChars: 2000 });
  assert.ok(text.length <= 2100, String(text.length));
  assert.match(text, /^- … and \d+ more topics \(\d+ reflections\)$/m);
});

test('superseded reflections are history: left out of the index and its counts', () => {
  const current = reflection({ id: 'ref_new', topic: 'queue', content: 'The queue is nats.' });
  const superseded = reflection({ id: 'ref_old', topic: 'queue', content: 'The queue is rabbitmq.', supersededBy: 'ref_new', supersededAt: 2_000 });
  const gone = reflection({ id: 'ref_gone', topic: 'billing', content: 'Bob owns billing.', supersededBy: 'ref_new', supersededAt: 2_000 });
  const text = buildRootIndex([superseded, current, gone]);
  assert.is(text, buildRootIndex([current]));
  assert.match(text, /^1 reflection \(0 procedural, 1 factual\) in 1 topic\./m);
  assert.not.match(text, /rabbitmq|billing/);
  assert.match(buildRootIndex([superseded]), /No memories yet/);
});

test('the stored index is rebuilt from current reflections only', async () => {
  const world = await openWorld();
  try {
    const { agent, reflections } = world;
    const { stored } = await world.writer.write(agent.id, [
      { kind: 'factual', content: 'The queue is rabbitmq.', topic: 'queue' },
      { kind: 'factual', content: 'The office plants need water on Mondays.', topic: 'office' },
    ], 'conversation');
    await reflections.update(agent.id, stored[0].id, { supersededBy: stored[1].id });
    const markdown = await rebuildRootIndex(agent.id, { reflections, control: world.control });
    assert.not.match(markdown, /rabbitmq/);
    assert.match(markdown, /plants/);
    assert.is(await world.control.indexes.get(agent.id), markdown);
  } finally {
    await world.dispose();
  }
});

test.run();
