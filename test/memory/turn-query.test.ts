/**
 * The retrieval query of a turn, per protocol: the user's text, the error lines of new
 * tool results, the commands and paths of new tool calls; bounded whatever the outputs
 * hold. Real request shapes from test/fixtures where they exist.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QUERY_CHARS, substantive, turnQuery } from '../../src/memory/turn-query.js';
import { injectionQuery } from '../../src/memory/retrieval.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { messages as messagesAdapter } from '../../src/protocols/messages/adapter.js';
import { responses } from '../../src/protocols/responses/adapter.js';
import type { ProtocolAdapter } from '../../src/protocols/types.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures');
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

/** The query of the messages past the first `seen`. */
const queryOf = (adapter: ProtocolAdapter, list: unknown[], seen: number) => turnQuery(adapter, list, { from: seen, to: list.length - 1 });
const linesOf = (text: string) => text.split('\n');

const TSC_FAILURE = [
  '> app@1.0.0 build',
  '> tsc -p tsconfig.build.json',
  '',
  "src/payments/charge.ts(41,7): error TS2322: Type 'string' is not assignable to type 'number'.",
  '',
  'Found 1 error in src/payments/charge.ts:41',
].join('\n');

test('Codex (Responses): the exec_command call and its output, from the recorded request', () => {
  const recorded = fixture('codex/http-3-tool-output.json').body;
  const input = recorded.input as unknown[];
  const { text } = queryOf(responses, input, input.length - 2);
  assert.is(linesOf(text)[0], 'cat docs/RELEASE.md', 'the command the model ran');
  assert.not.match(text, 'Chunk ID', "Codex's output header is not searched");
  assert.not.match(text, 'Release checklist', 'a successful output gives its paths, not its prose');
  assert.ok(text.length <= QUERY_CHARS);

  const failing = [
    ...input.slice(0, -1),
    { type: 'function_call_output', call_id: 'call_codex_rec_1', output: `Chunk ID: 1a2b3c\nWall time: 1.2 seconds\nProcess exited with code 2\nOriginal token count: 40\nOutput:\n${TSC_FAILURE}` },
  ];
  const lines = linesOf(queryOf(responses, failing, input.length - 2).text);
  assert.equal(lines.slice(0, 2), ['Process exited with code 2', "src/payments/charge.ts(41,7): error TS2322: Type 'string' is not assignable to type 'number'."]);
  assert.ok(lines.includes('cat docs/RELEASE.md'));
});

test('Responses: a shell call argv without its shell wrapper, a free-form patch by its paths, outputs in parts', () => {
  const input = [
    { type: 'local_shell_call', call_id: 's1', status: 'completed', action: { type: 'exec', command: ['bash', '-lc', 'npm run migrate'], working_directory: '/srv/app' } },
    { type: 'local_shell_call_output', call_id: 's1', output: 'Error: relation "users" does not exist' },
    { type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: '*** Begin Patch\n*** Update File: src/db/migrate.ts\n@@\n-old\n+new\n*** End Patch' },
    { type: 'custom_tool_call_output', call_id: 'p1', output: [{ type: 'input_text', text: 'Done!' }] },
  ];
  const lines = linesOf(queryOf(responses, input, 0).text);
  assert.equal(lines, ['Error: relation "users" does not exist', 'npm run migrate', 'src/db/migrate.ts']);
});

test('Claude Code (messages): tool_use blocks and a user message of tool_result blocks', () => {
  const list = [
    { role: 'user', content: [{ type: 'text', text: 'Fix the build' }] },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'I will run the build and read the file it complains about.' },
        { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm run build', description: 'Build the project' } },
        { type: 'tool_use', id: 'toolu_2', name: 'Read', input: { file_path: '/work/app/src/payments/charge.ts' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: [{ type: 'text', text: `Exit code 2\n${TSC_FAILURE}` }] },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: '     1\texport function charge(amount: number) {\n     2\t  return amount;\n     3\t}' },
        { type: 'text', text: '<system-reminder>\nThe user opened charge.ts.\n</system-reminder>' },
      ],
    },
  ];
  const lines = linesOf(queryOf(messagesAdapter, list, 1).text);
  assert.equal(lines, [
    'Exit code 2',
    "src/payments/charge.ts(41,7): error TS2322: Type 'string' is not assignable to type 'number'.",
    'npm run build',
    '/work/app/src/payments/charge.ts',
  ]);
  assert.not.ok(lines.some((line) => line.includes('I will run')), "the assistant's prose is never searched");
  assert.not.ok(lines.some((line) => line.includes('system-reminder')), "the client's own context is not the user's text");
});

test('Claude Code: a failed tool with no error line of its own is searched by its first line', () => {
  const list = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: { file_path: 'config/payments.yaml' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: true, content: '<tool_use_error>File does not exist.</tool_use_error>' }] },
  ];
  assert.equal(linesOf(queryOf(messagesAdapter, list, 0).text), ['<tool_use_error>File does not exist.</tool_use_error>', 'config/payments.yaml']);
});

test('Claude Code ToolSearch round trip (recorded): nothing worth searching', () => {
  const list = fixture('mcp-clients/claude-code-tool-search-loaded.json').body.messages as unknown[];
  assert.is(queryOf(messagesAdapter, list, list.length - 2).text, '');
});

test('chat completions (Copilot CLI): tool_calls and tool messages, the newest result first', () => {
  const list = [
    { role: 'system', content: 'You are the GitHub Copilot CLI.' },
    { role: 'user', content: 'Why does the deploy fail?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: './tools/deploy.sh --dry-run', description: 'Dry run' }) } },
        { id: 'c2', type: 'function', function: { name: 'view', arguments: JSON.stringify({ path: 'tools/deploy.sh' }) } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'deploy: staging profile missing\nbash: aws: command not found\n<exited with exit code 127>' },
    { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: '1. #!/bin/sh\n2. aws s3 sync ./dist s3://bucket' }] },
  ];
  const lines = linesOf(queryOf(chatCompletions, list, 2).text);
  // tools/deploy.sh is said by the command already.
  assert.equal(lines, ['bash: aws: command not found', '<exited with exit code 127>', './tools/deploy.sh --dry-run', '/bin/sh', './dist']);
});

test('"continue" after a failing tool result searches the error, not the word', () => {
  const list = [
    { role: 'user', content: 'Run the payment tests' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"npm test -- payments"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'FAIL src/payments/charge.test.ts\n  ● charge › rounds to cents\n    TypeError: Cannot read properties of undefined (reading \'currency\')' },
    { role: 'user', content: 'continue' },
  ];
  const { text } = queryOf(chatCompletions, list, 1);
  assert.not.match(text, 'continue');
  assert.match(text, "TypeError: Cannot read properties of undefined (reading 'currency')");
  assert.ok(text.startsWith('FAIL src/payments/charge.test.ts'));
  // Text beside a tool result is the client's (Claude Code's "Tool loaded."), never the query's.
  const mixed = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: { command: 'npm test -- payments' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'Error: connect ECONNREFUSED 127.0.0.1:5432' }, { type: 'text', text: 'Tool loaded. Interrupted by the user' }] },
  ];
  assert.equal(linesOf(queryOf(messagesAdapter, mixed, 0).text), ['Error: connect ECONNREFUSED 127.0.0.1:5432', 'npm test -- payments']);
});

test('a substantive user text leads; the tool lines follow; a low-content one alone is still searched', () => {
  const list = [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{"command":"make deploy"}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'make: *** [deploy] Error 2' },
    { role: 'user', content: 'The staging deploy keeps failing on the database migration step' },
  ];
  assert.equal(linesOf(queryOf(chatCompletions, list, 0).text), [
    'The staging deploy keeps failing on the database migration step',
    'make: *** [deploy] Error 2',
    'make deploy',
  ]);
  const plain = [{ role: 'assistant', content: 'Shall I go on?' }, { role: 'user', content: 'go ahead' }];
  assert.is(queryOf(chatCompletions, plain, 0).text, 'go ahead', 'nothing else to search for: the text as it is');
  const several = [{ role: 'user', content: 'The API listens on port 8080.' }, { role: 'user', content: 'Where are its logs?' }];
  assert.is(queryOf(chatCompletions, several, 0).text, 'The API listens on port 8080.\n\nWhere are its logs?', 'every new user input, the newest last');
});

test('low content is judged by content words, not phrases', () => {
  for (const text of ['continue', 'fix it', 'yes', 'go on', 'try again', 'go ahead', 'Yes, please do it.', 'ok']) assert.not.ok(substantive(text), text);
  for (const text of ['fix the deploy script', 'why does checkout fail?', 'run npm test in packages/api']) assert.ok(substantive(text), text);
});

test('a 400 KB tool output costs a bounded query: its head and tail are read, its errors found there', () => {
  const filler = Array.from({ length: 8000 }, (_, i) => `[build] compiled module-${i}.ts in ${i % 97} ms`).join('\n');
  const middle = 'Error: this line sits in the middle and is never read';
  const output = `${filler}\n${middle}\n${filler}\nerror: linker failed: undefined symbol _payments_init\nFAILED (exit code 1)`;
  assert.ok(output.length > 400_000, String(output.length));
  for (const [adapter, list] of [
    [chatCompletions, [{ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{"command":"make"}' } }] }, { role: 'tool', tool_call_id: 'c', content: output }]],
    [messagesAdapter, [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Bash', input: { command: 'make' } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: output }] }]],
    [responses, [{ type: 'function_call', call_id: 'c', name: 'exec_command', arguments: '{"cmd":"make"}' }, { type: 'function_call_output', call_id: 'c', output }]],
  ] as Array<[ProtocolAdapter, unknown[]]>) {
    const { text } = queryOf(adapter, list, 0);
    assert.ok(text.length <= QUERY_CHARS, `${adapter.id}: ${text.length} characters`);
    assert.equal(linesOf(text), ['error: linker failed: undefined symbol _payments_init', 'FAILED (exit code 1)', 'make'], adapter.id);
    // Retrieval searches the composed query whole: nothing of it falls between its head and its tail.
    assert.is(injectionQuery(text)?.text, text, adapter.id);
  }
  // Many such outputs in one turn: the total read is bounded too, and so is the query.
  const many = Array.from({ length: 30 }, (_, i) => [
    { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: `make target-${i}` }) } }] },
    { role: 'tool', tool_call_id: `c${i}`, content: `${output}\nerror: target-${i} failed in src/target-${i}/main.c` },
  ]).flat();
  const { text } = queryOf(chatCompletions, many, 0);
  assert.ok(text.length <= QUERY_CHARS, `${text.length} characters`);
  assert.equal(
    linesOf(text).slice(0, 4),
    ['error: linker failed: undefined symbol _payments_init', 'FAILED (exit code 1)', 'error: target-29 failed in src/target-29/main.c', 'error: target-28 failed in src/target-28/main.c'],
    'the newest result first',
  );
  assert.not.match(text, 'target-0 failed', 'outputs past the read budget are not read');
});

test('a long user text and many tool lines still fit retrieval’s window, the user text first', () => {
  const question = `The checkout service times out under load. ${'Here is what I tried so far and what happened each time. '.repeat(40)}What should I change?`;
  const calls = Array.from({ length: 12 }, (_, i) => ({ type: 'function_call', call_id: `c${i}`, name: 'exec_command', arguments: JSON.stringify({ cmd: `grep -rn timeout services/checkout/handler-${i}.go` }) }));
  const input = [...calls, { type: 'message', role: 'user', content: [{ type: 'input_text', text: question }] }];
  const { text } = queryOf(responses, input, 0);
  assert.ok(text.length <= QUERY_CHARS, String(text.length));
  assert.ok(text.startsWith('The checkout service times out under load.'));
  assert.match(text, 'What should I change?');
  assert.match(text, 'grep -rn timeout services/checkout/handler-11.go');
  const search = injectionQuery(text);
  assert.is(search?.text, text);
  // Keyword search gets the opening words (the user's) as well as the latest (the paths).
  const keywords = search!.keywords.split(' ');
  assert.ok(keywords.length <= 32);
  for (const word of ['checkout', 'service', 'load', 'handler', '11']) assert.ok(keywords.includes(word), `${word} in ${search!.keywords}`);
});

test('a query with more content words than keyword search takes keeps the user’s opening words and the latest ones', () => {
  const vocabulary = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber basalt cobalt dune ember flint garnet'.split(' ');
  const output = Array.from({ length: 4 }, (_, i) => `Error: ${vocabulary.slice(i * 8, i * 8 + 8).join(' ')} unavailable`).join('\n');
  const list = [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{"command":"make smoke"}' } }] },
    { role: 'tool', tool_call_id: 'c', content: output },
    { role: 'user', content: 'Checkout requests stall under load since the release; customers abandon carts.' },
  ];
  const { text } = queryOf(chatCompletions, list, 0);
  assert.ok(text.startsWith('Checkout requests stall'));
  const keywords = injectionQuery(text)!.keywords.split(' ');
  assert.is(keywords.length, 32);
  for (const word of ['checkout', 'requests', 'stall', 'customers', 'make', 'smoke']) assert.ok(keywords.includes(word), `${word} in ${keywords.join(' ')}`);
});

test('a recall result shows memories the model holds: their ids are returned, its text not searched', () => {
  const id = 'ref_0123456789abcdef01234567';
  const list = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'mcp__engram__recall', input: { query: 'deploy' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: `- ${id} [procedural] (deploy) Run tools/deploy.sh with --dry-run first. (score 0.91)` }] }] },
  ];
  const found = queryOf(messagesAdapter, list, 0);
  assert.equal(found.shown, [id]);
  assert.is(found.text, '');
});

test('paths: file-like only, never URLs, line and column numbers left off', () => {
  const list = [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'see https://example.com/docs/guide.html and/or the text/plain part\nsrc/app.ts:12:5 - warning\n2026/11/22 ~/.config/engram/config.toml' },
  ];
  assert.equal(linesOf(queryOf(chatCompletions, list, 0).text), ['src/app.ts', '~/.config/engram/config.toml']);
});

test.run();
