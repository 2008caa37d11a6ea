/**
 * What an extraction call is shown of the agent's memory: the related reflections found
 * in the real SQLite store (the message that frames them: extraction-frame.test.ts).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openWorld } from './sqlite-world.js';
import { MAX_EXISTING, relatedReflections } from '../../src/memory/existing-reflections.js';

test('related reflections: current ones sharing the chunk’s words or meaning, at most a few; superseded and unrelated ones never', async () => {
  const world = await openWorld();
  try {
    const services = ['billing', 'search', 'checkout', 'payments', 'auth', 'mailer', 'gateway', 'reports', 'exports', 'imports'];
    const { stored } = await world.writer.write(
      world.agent.id,
      [
        ...services.map((service) => ({ kind: 'factual', content: `The ${service} service deploys to staging with make ship-${service}.`, topic: 'deployment' })),
        { kind: 'factual', content: 'The office coffee machine descales itself on Fridays.', topic: 'office' },
      ],
      'conversation',
    );
    const old = stored[0];
    await world.reflections.update(world.agent.id, old.id, { supersededBy: stored[1].id });
    const turns = [
      { role: 'user' as const, text: 'How does a service deploy to staging? I ran make ship-billing yesterday.' },
      { role: 'tool' as const, text: 'coffee machine descales itself on Fridays' },
      { role: 'assistant' as const, text: 'Each service deploys to staging with its own make target.' },
    ];
    const found = await relatedReflections({ reflections: world.reflections, embedder: world.embedder }, world.agent, turns, {});
    assert.is(found.length, MAX_EXISTING);
    assert.ok(found.every((r) => r.topic === 'deployment'), 'the tool output is not searched; the unrelated one is not shown');
    assert.not.ok(found.some((r) => r.id === old.id), 'superseded: history, never shown');
    assert.equal(await relatedReflections({ reflections: world.reflections, embedder: world.embedder }, world.agent, [turns[1]], {}), [], 'tool output alone: nothing');
  } finally {
    await world.dispose();
  }
});

test.run();
