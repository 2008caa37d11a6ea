/**
 * The tee's limits: whatever the upstream sends, the client gets its bytes untouched and
 * at once, while the extraction side holds at most one event of `maxEventBytes`; past it
 * the answer is left unassembled (and so not learnt from), with its size to report.
 */
import { Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { relay, type ClientSink } from '../../src/streaming/relay.js';

/** A client that takes everything at once and keeps a digest of it. */
function client() {
  const hash = createHash('sha256');
  let bytes = 0;
  const sink: ClientSink = {
    write(chunk) {
      hash.update(chunk);
      bytes += chunk.length;
      return true;
    },
    onDrain: (resume) => resume(),
    end: () => undefined,
    fail: () => assert.unreachable('the relay failed'),
  };
  return { sink, received: () => ({ bytes, sha256: hash.digest('base64url') }) };
}

function digest(chunks: Buffer[]): { bytes: number; sha256: string } {
  const hash = createHash('sha256');
  for (const chunk of chunks) hash.update(chunk);
  return { bytes: chunks.reduce((sum, chunk) => sum + chunk.length, 0), sha256: hash.digest('base64url') };
}

const run = (chunks: Buffer[], sse: boolean, maxEventBytes?: number) => {
  const { sink, received } = client();
  const outcome = relay({
    body: Readable.from(chunks),
    sink,
    adapter: chatCompletions,
    sse,
    signal: new AbortController().signal,
    failure: (error) => error,
    maxEventBytes,
  });
  return outcome.then((result) => ({ result, received: received() }));
};

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

test('an answer within the limit is assembled', async () => {
  const stream = [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hello' }), chunk({ content: ' there' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];
  const chunks = stream.map((text) => Buffer.from(text));
  const { result, received } = await run(chunks, true, 1024);
  assert.equal(received, digest(chunks));
  assert.is(result.outcome, 'completed');
  if (result.outcome !== 'completed') return;
  assert.is(result.unassembled, undefined);
  assert.is(result.answer.final, true);
  assert.equal(result.answer.turns, [{ role: 'assistant', text: 'Hello there' }]);
});

test('an event over the limit: relayed byte for byte, not assembled, its size reported', async () => {
  const big = chunk({ content: 'x'.repeat(5000) });
  const stream = [chunk({ role: 'assistant', content: '' }), big, chunk({ content: ' and the rest' }), chunk({}, 'stop'), 'data: [DONE]\n\n'];
  const chunks = Buffer.from(stream.join('')).reduce<Buffer[]>((pieces, _, at, all) => (at % 700 === 0 ? [...pieces, all.subarray(at, at + 700)] : pieces), []);
  const { result, received } = await run(chunks, true, 1024);
  assert.equal(received, digest(chunks));
  assert.is(result.outcome, 'completed');
  if (result.outcome !== 'completed') return;
  assert.is(result.unassembled, Buffer.byteLength(big) - 1);
  assert.is(result.answer.final, false, 'the turn is not learnt from');
  assert.is(result.answer.errored, true);
  assert.equal(result.answer.turns, []);
});

test('a 40 MB line without newline: relayed byte for byte in linear time', async () => {
  const piece = Buffer.alloc(64 * 1024, 'x');
  const chunks = [Buffer.from('data: '), ...Array.from({ length: 640 }, () => piece)];
  const started = performance.now();
  const { result, received } = await run(chunks, true, 8 * 1024 * 1024);
  const elapsed = performance.now() - started;
  assert.equal(received, digest(chunks));
  assert.ok(elapsed < 2_000, `relayed in ${elapsed.toFixed(0)} ms`);
  assert.is(result.outcome, 'completed');
  if (result.outcome === 'completed') assert.is(result.unassembled, 6 + 640 * piece.length);
});

test('a JSON answer over the limit is not held', async () => {
  const body = Buffer.from(JSON.stringify({ id: 'c1', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'y'.repeat(4000) }, finish_reason: 'stop' }] }));
  const chunks = [body.subarray(0, 1000), body.subarray(1000)];
  const { result, received } = await run(chunks, false, 1024);
  assert.equal(received, digest(chunks));
  assert.is(result.outcome, 'completed');
  if (result.outcome !== 'completed') return;
  assert.is(result.unassembled, body.length);
  assert.is(result.answer.final, false);

  const within = await run(chunks, false, 1024 * 1024);
  assert.is(within.result.outcome === 'completed' && within.result.answer.final, true);
});

test('a slow client: the upstream body waits while the client is full; every byte arrives, in order, and the answer is assembled', async () => {
  const events = [chunk({ role: 'assistant', content: '' }), ...Array.from({ length: 400 }, (_, n) => chunk({ content: `${n} ` })), chunk({}, 'stop'), 'data: [DONE]\n\n'].map((text) => Buffer.from(text));
  // An upstream that makes its next event only when read: how far it runs ahead of the client shows whether it was paused.
  let made = 0;
  const body = new Readable({
    highWaterMark: 1024,
    read() {
      this.push(made < events.length ? events[made++] : null);
    },
  });
  // A client whose buffer takes 4 KiB, then says it is full until it drains, a moment later.
  const received: Buffer[] = [];
  let buffered = 0;
  let full = false;
  let drains = 0;
  let writtenWhileFull = 0;
  let mostAhead = 0;
  const waiting: Array<() => void> = [];
  const sink: ClientSink = {
    write(chunk) {
      if (full) writtenWhileFull++;
      received.push(Buffer.from(chunk));
      mostAhead = Math.max(mostAhead, made - received.length);
      buffered += chunk.length;
      full = buffered >= 4096;
      return !full;
    },
    onDrain(resume) {
      waiting.push(resume);
      setTimeout(() => {
        drains++;
        buffered = 0;
        full = false;
        for (const next of waiting.splice(0)) next();
      }, 2);
    },
    end: () => undefined,
    fail: () => assert.unreachable('the relay failed'),
  };
  const result = await relay({ body, sink, adapter: chatCompletions, sse: true, signal: new AbortController().signal, failure: (error) => error });
  assert.ok(drains >= 10, `the client was full ${drains} times`);
  assert.is(writtenWhileFull, 0, 'nothing is written to a full client');
  assert.ok(mostAhead < 40, `the upstream ran at most ${mostAhead} events ahead of the client, of ${events.length}`);
  assert.equal(Buffer.concat(received), Buffer.concat(events), 'every byte, in order');
  assert.is(result.outcome, 'completed');
  if (result.outcome !== 'completed') return;
  assert.is(result.answer.final, true);
  assert.equal(result.answer.turns, [{ role: 'assistant', text: Array.from({ length: 400 }, (_, n) => `${n} `).join('') }]);
});

test.run();
