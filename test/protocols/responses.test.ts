/** The Responses adapter, pure: input forms, injection target, transcript, answer folding. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EngramError } from '../../src/errors.js';
import { responses } from '../../src/protocols/responses/adapter.js';
import type { SseEvent } from '../../src/protocols/types.js';
import { proposedFrom, RECORD_REFLECTIONS, RECORD_REFLECTIONS_TOOL } from '../../src/memory/extraction-tool.js';

const sse = (data: unknown): SseEvent => ({ event: (data as { type: string }).type, data: JSON.stringify(data) });

test('a string input is one user message; items pass through as they are', () => {
  const body = { model: 'm', input: 'hello' };
  responses.validate(body);
  assert.equal(responses.messages(body), [{ role: 'user', content: 'hello' }]);
  const items = [{ type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' }, { role: 'user', content: 'hi' }];
  assert.is(responses.messages({ model: 'm', input: items }), items);
});

test('validation names the bad field', () => {
  const cases: Array<[unknown, string]> = [
    [{ model: 'm', input: 3 }, 'input'],
    [{ model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ model: 'm', input: [{ role: 'user' }] }, 'input[0].content'],
    [{ model: 'm', input: ['text'] }, 'input[0]'],
    [{ model: 'm', input: 'x', store: 'yes' }, 'store'],
    [{ input: 'x' }, 'model'],
  ];
  for (const [body, param] of cases) {
    try {
      responses.validate(body);
      assert.unreachable(JSON.stringify(body));
    } catch (error) {
      assert.instance(error, EngramError);
      assert.is((error as EngramError).param, param);
    }
  }
  responses.validate({ model: 'm', input: [{ type: 'function_call_output', call_id: 'c', output: 'ok' }, { type: 'some_future_item' }] });
});

test('injection targets user messages only, and appends a part of the right type', () => {
  assert.ok(responses.isUserInput({ type: 'message', role: 'user', content: [] }));
  assert.not.ok(responses.isUserInput({ type: 'function_call_output', call_id: 'c', output: 'x' }));
  assert.ok(responses.isSystemEntry({ role: 'developer', content: 'rules' }));
  assert.equal(responses.appendText({ role: 'user', content: 'q' }, 'B'), { role: 'user', content: 'q\n\nB' });
  assert.equal(responses.appendText({ role: 'user', content: [{ type: 'input_text', text: 'q' }] }, 'B'), {
    role: 'user',
    content: [{ type: 'input_text', text: 'q' }, { type: 'input_text', text: 'B' }],
  });
  assert.is(responses.queryText({ role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'x' }] }), 'a\n[image]');
});

test('transcript: messages, calls and outputs; never reasoning or developer text', () => {
  const turns = responses.transcript({
    model: 'm',
    input: [
      { role: 'developer', content: 'You are Codex.' },
      { role: 'user', content: [{ type: 'input_text', text: 'list files' }] },
      { type: 'reasoning', id: 'rs', summary: [{ type: 'summary_text', text: 'secret thoughts' }], encrypted_content: 'gAAAA' },
      { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command":["ls"]}' },
      { type: 'function_call_output', call_id: 'c1', output: 'README.md' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'One file.' }] },
    ],
  });
  assert.equal(turns.map((turn) => turn.role), ['user', 'assistant', 'tool', 'assistant']);
  assert.match(turns[1].text, 'shell');
  assert.not.match(JSON.stringify(turns), 'secret thoughts');
  assert.not.match(JSON.stringify(turns), 'gAAAA');
  assert.not.match(JSON.stringify(turns), 'You are Codex');
});

test('chains: the id, the expansion without it, store', () => {
  const chain = responses.chain!;
  const body = { model: 'm', previous_response_id: 'resp_1', input: 'next', instructions: 'be brief' };
  assert.is(chain.previousId(body), 'resp_1');
  assert.equal(chain.expand(body, [{ role: 'user', content: 'first' }]), {
    model: 'm',
    instructions: 'be brief',
    input: [{ role: 'user', content: 'first' }, { role: 'user', content: 'next' }],
  });
  assert.is(chain.stored(body), true);
  assert.is(chain.stored({ ...body, store: false }), false);
});

const completed = (output: unknown[], status = 'completed') => ({ type: `response.${status}`, response: { id: 'resp_9', object: 'response', status, output } });
const text = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] };
const call = { type: 'function_call', call_id: 'c', name: 'shell', arguments: '{}' };

test('assembler: a completed text answer is final and kept; a call waits for the client', () => {
  const final = responses.createAssembler();
  final.push(sse({ type: 'response.created', response: { id: 'resp_9', status: 'in_progress', output: [] } }));
  final.push(sse(completed([text])));
  const answer = final.finish();
  assert.is(answer.final, true);
  assert.equal(answer.turns, [{ role: 'assistant', text: 'Done.' }]);
  assert.is(answer.response?.id, 'resp_9');

  const calling = responses.createAssembler();
  calling.push(sse(completed([call])));
  assert.is(calling.finish().final, false);
  assert.is(calling.finish().stopReason, 'tool_calls');
  assert.ok(calling.finish().response, 'a call is still a response to chain from');

  const cut = responses.createAssembler();
  cut.push(sse(completed([text], 'incomplete')));
  assert.is(cut.finish().final, false);

  const failed = responses.createAssembler();
  failed.push(sse({ type: 'response.output_item.done', output_index: 0, item: text }));
  failed.push(sse({ type: 'error', code: 'server_error', message: 'boom' }));
  const failedAnswer = failed.finish();
  assert.is(failedAnswer.errored, true);
  assert.is(failedAnswer.final, false);
  assert.is(failedAnswer.response, undefined, 'a failed response is not kept');
});

test('JSON answers and the extraction call', () => {
  assert.is(responses.assembleJson({ object: 'response', id: 'r', status: 'completed', output: [text] }).final, true);
  assert.is(responses.assembleJson({ error: { message: 'x' } }).errored, true);
  const request = responses.toolRequest('m', 'Extract.', 'transcript', RECORD_REFLECTIONS) as any;
  assert.equal(request.tool_choice, { type: 'function', name: 'record_reflections' });
  assert.is(request.store, false);
  const reflections = proposedFrom(
    responses.toolArguments(
      { output: [{ type: 'function_call', name: 'record_reflections', arguments: '{"reflections":[{"kind":"factual","content":"c","topic":"t"}]}' }] },
      RECORD_REFLECTIONS_TOOL,
    ),
  );
  assert.equal(reflections, [{ kind: 'factual', content: 'c', topic: 't' }]);
  assert.throws(() => responses.toolArguments({ output: [text] }, RECORD_REFLECTIONS_TOOL));
});

test.run();
