/**
 * Cleaned turns remembered between jobs: a job built with them is the job built
 * without, the history re-sent each turn is cleaned once, and the memory is bounded.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createCleanedTurns } from '../../src/memory/cleaned-turns.js';
import { buildExtractionJob } from '../../src/memory/extraction-job.js';
import type { Turn } from '../../src/domain/transcript.js';

const KEY = 'sk-proj-' + 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'.repeat(2);
const history: Turn[] = [
  { role: 'user', text: `Deploy with the key ${KEY} and tell me what fails. `.repeat(4) },
  { role: 'assistant', text: 'I will run the deploy script and read its output. '.repeat(3) },
  { role: 'tool', text: 'step ok\n'.repeat(200) + `Error: token ${KEY} rejected\n` + 'cleanup ok\n'.repeat(200) },
  { role: 'assistant', text: 'The deploy fails because the key is rejected: rotate it first. '.repeat(2) },
];
const job = (turns: Turn[], cleaned?: ReturnType<typeof createCleanedTurns>) =>
  buildExtractionJob({ agentId: 'a', orgId: 'o', conversationId: 'c', protocol: 'chat-completions', model: 'm', turns, watermark: 0, maxBytes: 32_768, settledAt: 1, cleaned });

test('a job built with remembered turns is the job built without them, secrets redacted alike', () => {
  const cleaned = createCleanedTurns();
  for (let turn = 1; turn <= history.length; turn++) {
    const turns = history.slice(0, turn);
    assert.equal(job(turns, cleaned), job(turns));
  }
  assert.not.ok(JSON.stringify(job(history, cleaned)).includes(KEY));
});

test('the history a client re-sends is cleaned once: a later turn finds the earlier ones remembered', () => {
  const cleaned = createCleanedTurns();
  job(history.slice(0, 3), cleaned);
  const held = cleaned.size.entries;
  assert.is(held, 3, 'one entry per turn long enough to be worth it');
  let calls = 0;
  const spy = { ...cleaned, get: (digest: string, shape: string, clean: () => { text: string; bytes: number }) => cleaned.get(digest, shape, () => (calls++, clean())) };
  job(history, spy);
  assert.is(calls, 1, 'only the new turn is cleaned');
});

test('what is remembered stays under its bound, the oldest out first', () => {
  const cleaned = createCleanedTurns(4_000);
  for (let i = 0; i < 50; i++) job([{ role: 'user', text: `Question ${i}: ${KEY} `.repeat(40) }], cleaned);
  assert.ok(cleaned.size.chars <= 4_000, `${cleaned.size.chars} characters held`);
  assert.ok(cleaned.size.entries >= 1);
});

test.run();
