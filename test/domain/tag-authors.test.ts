import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { presumedTagAuthor, tagAuthorOf, taggedBy } from '../../src/domain/tag-authors.js';

test('the source says who wrote the tags a reflection arrives with', () => {
  assert.is(tagAuthorOf('conversation'), 'extraction');
  assert.is(tagAuthorOf('transcript'), 'extraction');
  assert.is(tagAuthorOf('mcp'), 'agent');
});

test('only subject tags have an author: none, or only Engram’s markers, is untagged', () => {
  assert.is(taggedBy([], 'agent'), undefined);
  assert.is(taggedBy(['added-by-hand', 'edited-by-hand'], 'person'), undefined);
  assert.is(taggedBy(['deploys'], 'tagging'), 'tagging');
});

test('the backfill rule: a hand mark means a person, else the source decides; no subject tags, no author', () => {
  assert.is(presumedTagAuthor({ tags: ['ci', 'added-by-hand'], source: 'mcp' }), 'person');
  assert.is(presumedTagAuthor({ tags: ['ci', 'edited-by-hand'], source: 'conversation' }), 'person');
  assert.is(presumedTagAuthor({ tags: ['ci'], source: 'conversation' }), 'extraction');
  assert.is(presumedTagAuthor({ tags: ['ci'], source: 'transcript' }), 'extraction');
  assert.is(presumedTagAuthor({ tags: ['ci'], source: 'mcp' }), 'agent');
  assert.is(presumedTagAuthor({ tags: ['added-by-hand'], source: 'mcp' }), undefined);
  assert.is(presumedTagAuthor({ tags: [], source: 'conversation' }), undefined);
});

test.run();
