import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { reflectionId } from '../../src/memory/reflection-id.js';

test('is ref_ and 24 hex characters, stable across calls', () => {
  const id = reflectionId('agt_1', 'factual', 'The deploy script is tools/deploy.sh.');
  assert.match(id, /^ref_[0-9a-f]{24}$/);
  assert.is(reflectionId('agt_1', 'factual', 'The deploy script is tools/deploy.sh.'), id);
});

test('ignores case, spacing and trailing punctuation', () => {
  const id = reflectionId('agt_1', 'factual', 'The deploy script is tools/deploy.sh.');
  assert.is(reflectionId('agt_1', 'factual', '  the deploy   script is\ntools/deploy.sh  '), id);
  assert.is(reflectionId('agt_1', 'factual', 'THE DEPLOY SCRIPT IS TOOLS/DEPLOY.SH!'), id);
});

test('differs by agent, kind and content', () => {
  const id = reflectionId('agt_1', 'factual', 'Run npm test before pushing.');
  assert.is.not(reflectionId('agt_2', 'factual', 'Run npm test before pushing.'), id);
  assert.is.not(reflectionId('agt_1', 'procedural', 'Run npm test before pushing.'), id);
  assert.is.not(reflectionId('agt_1', 'factual', 'Run npm test after pushing.'), id);
});

test('does not confuse field boundaries', () => {
  // Without separators "agt_1" + "factual" and "agt_1f" + "actual" would hash alike.
  const shifted = reflectionId('agt_1f', 'actual' as 'factual', 'x');
  assert.is.not(shifted, reflectionId('agt_1', 'factual', 'x'));
});

test.run();
