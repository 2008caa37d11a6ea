/**
 * Issue 31, the relay's own bounds. An answer without end is cut at `maxStreamMs`: at the
 * end of the event under way, then the protocol's `stream_time_limit` error event, and
 * the upstream body is torn down. An answer over `maxAnswerBytes` reaches the client byte
 * for byte and completes, its assembly truncated. An extraction side that fails (once, a
 * string over V8's limit did) never fails a stream the client had whole.
 */
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import type { ProtocolAdapter } from '../../src/protocols/types.js';
import { relay, type ClientSink } from '../../src/streaming/relay.js';

function client() {
  const parts: Buffer[] = [];
  let failed: { frame: string | undefined } | undefined;
  const sink: ClientSink = {
    write(chunk) {
      parts.push(Buffer.from(chunk));
      return true;
    },
    onDrain: (resume) => resume(),
    end: () => undefined,
    fail: (frame) => (failed = { frame }),
  };
  return { sink, text: () => Buffer.concat(parts).toString('utf8'), bytes: () => Buffer.concat(parts), failed: () => failed };
}

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** An upstream body that streams the same event without end, in 1000-byte pieces that split events anywhere. */
function endless(): Readable {
  const event = Buffer.from(chunk({ content: 'endless '.repeat(300) }));
  let offset = 0;
  return new Readable({
    read() {
      const piece = Buffer.alloc(1000);
      for (let i = 0; i < piece.length; i++) piece[i] = event[(offset + i) % event.length];
      offset = (offset + piece.length) % event.length;
      // A macrotask between pieces, as a socket gives: the time limit's timer gets its turn.
      setImmediate(() => this.push(piece));
    },
  });
}

test('an endless stream ends at the time limit, at an event end, with the error event; the upstream body is destroyed', async () => {
  const body = endless();
  const { sink, text, failed } = client();
  const started = performance.now();
  const outcome = await relay({ body, sink, adapter: chatCompletions, sse: true, signal: new AbortController().signal, failure: (error) => error, maxStreamMs: 300, maxAnswerBytes: 64 * 1024 });
  const took = performance.now() - started;
  assert.ok(took >= 290 && took < 3_000, `ended after ${took.toFixed(0)} ms`);
  assert.is(outcome.outcome, 'failed');
  if (outcome.outcome !== 'failed') return;
  assert.is(outcome.error.code, 'stream_time_limit');
  assert.ok(body.destroyed, 'the upstream body is torn down');
  const relayed = text();
  assert.ok(relayed.length > 10_000);
  assert.ok(relayed.endsWith('\n\n'), 'what was relayed ends at an event end');
  for (const event of relayed.split('\n\n').filter(Boolean)) JSON.parse(event.replace(/^data: /, ''));
  const frame = failed()?.frame;
  assert.ok(frame, 'the client is sent an error event');
  assert.is(JSON.parse(frame!.replace(/^data: /, '')).error.code, 'stream_time_limit');
});

test('an answer over the answer limit: every byte to the client, completed, its assembly truncated', async () => {
  const events = [chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 200 }, () => chunk({ content: 'y'.repeat(1000) })), chunk({}, 'stop'), 'data: [DONE]\n\n'];
  const bytes = Buffer.from(events.join(''));
  const { sink, bytes: received, failed } = client();
  const outcome = await relay({ body: Readable.from([bytes]), sink, adapter: chatCompletions, sse: true, signal: new AbortController().signal, failure: (error) => error, maxAnswerBytes: 64 * 1024 });
  assert.is(createHash('sha256').update(received()).digest('hex'), createHash('sha256').update(bytes).digest('hex'));
  assert.is(failed(), undefined);
  assert.is(outcome.outcome, 'completed');
  if (outcome.outcome !== 'completed') return;
  assert.is(outcome.answer.final, true);
  assert.equal(outcome.answer.truncated, { keptBytes: 64 * 1024, bytes: 200_000 });
  assert.is(outcome.answer.turns[0].text.length, 64 * 1024);
});

test('an assembler that throws does not fail the stream: no error frame after [DONE], the answer is not learnt from', async () => {
  const throwing: ProtocolAdapter = {
    ...chatCompletions,
    createAssembler: () => ({
      push() {
        throw new RangeError('Invalid string length');
      },
      finish() {
        throw new Error('finish after a throw');
      },
    }),
  };
  const bytes = Buffer.from([chunk({ content: 'hi' }), chunk({}, 'stop'), 'data: [DONE]\n\n'].join(''));
  const { sink, text, failed } = client();
  const outcome = await relay({ body: Readable.from([bytes]), sink, adapter: throwing, sse: true, signal: new AbortController().signal, failure: (error) => error });
  assert.is(failed(), undefined, 'no upstream_stream_failed frame');
  assert.ok(text().endsWith('data: [DONE]\n\n'));
  assert.is(outcome.outcome, 'completed');
  if (outcome.outcome !== 'completed') return;
  assert.ok(outcome.assemblyError instanceof RangeError);
  assert.is(outcome.answer.final, false);
});

test.run();
