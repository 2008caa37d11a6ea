/** Recognising Engram's tools under every client's naming form, and what counts as a failed tool call. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { detectMemoryTools, engramToolName } from '../../src/conversation/memory-tools.js';
import { looksLikeFailure } from '../../src/protocols/shared.js';

const servers = ['engram', 'service'];

test('every naming form, for every tool, under each configured server name', () => {
  for (const tool of ['recall', 'remember', 'forget', 'memory_index']) {
    for (const server of servers) {
      assert.is(engramToolName({ name: `mcp__${server}__${tool}` }, servers), tool);
      assert.is(engramToolName({ name: tool, namespace: `mcp__${server}` }, servers), tool);
      assert.is(engramToolName({ name: `${server}-${tool}` }, servers), tool);
      assert.is(engramToolName({ name: `${server}_${tool}` }, servers), tool);
      assert.is(engramToolName({ name: `mcp_${server}_${tool}` }, servers), tool);
    }
    assert.is(engramToolName({ name: tool, description: 'Search memory. [engram-memory]' }, servers), tool);
  }
});

test('look-alikes are not Engram', () => {
  assert.is(engramToolName({ name: 'mcp__notes__recall' }, servers), undefined);
  assert.is(engramToolName({ name: 'recall', description: 'Recall a product' }, servers), undefined);
  assert.is(engramToolName({ name: 'recall', namespace: 'mcp__notes' }, servers), undefined);
  assert.is(engramToolName({ name: 'engram-delete_everything' }, servers), undefined);
  assert.is(engramToolName({ name: 'mcp__engram__recall' }, ['memory']), undefined, 'only the configured names');
  assert.is(engramToolName({ name: 'mcp__memory__recall' }, ['memory']), 'recall');
});

test('detection needs recall and reports each tool under the name the model knows', () => {
  assert.equal(detectMemoryTools([{ name: 'mcp__engram__recall', description: '' }, { name: 'mcp__engram__remember', description: '' }], servers), {
    names: { recall: 'mcp__engram__recall', remember: 'mcp__engram__remember' },
    deferred: false,
  });
  assert.equal(detectMemoryTools([{ name: 'recall', namespace: 'mcp__engram', description: '' }], servers), {
    names: { recall: 'mcp__engram.recall' },
    deferred: false,
  });
  assert.is(detectMemoryTools([{ name: 'mcp__engram__recall', description: '', deferred: true }], servers)?.deferred, true);
  assert.is(detectMemoryTools([{ name: 'mcp__engram__remember', description: '' }], servers), undefined);
});

test('failed tool output, by its start', () => {
  for (const text of [
    'Error: ENOENT: no such file or directory',
    'Traceback (most recent call last):\n  File "x.py"',
    'Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAIL',
    'bash: foo: command not found',
    'TypeError: undefined is not a function',
    'Process exited with code 2',
  ]) {
    assert.ok(looksLikeFailure(text), text);
  }
  for (const text of ['Exit code: 0\nOutput:\nok', 'All 12 tests passed', `${'log line\n'.repeat(300)}Error: deep in a log`, 'the error handling looks fine']) {
    assert.not.ok(looksLikeFailure(text), text);
  }
});

test.run();
