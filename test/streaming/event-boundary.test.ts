/**
 * Where an SSE byte stream stands between events (issue 31: a stream Engram ends is ended
 * at an event's end, so its error event is read as an event of its own). Recorded shapes
 * with LF, CRLF and CR line ends, split at every byte.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventBoundary } from '../../src/streaming/event-boundary.js';

const STREAMS = [
  'data: {"a":1}\n\ndata: {"b":2}\n\n',
  'event: message_start\r\ndata: {"x":"y"}\r\n\r\nevent: ping\r\ndata: {}\r\n\r\n',
  'data: one\r\rdata: two\r\r',
  ': comment\n\ndata: a\ndata: b\n\n',
];

/** The offsets after which the stream stands between events, by reading it whole. */
function eventEnds(text: string): number[] {
  const ends: number[] = [];
  const bytes = Buffer.from(text);
  for (let i = 1; i <= bytes.length; i++) {
    const before = bytes.subarray(0, i).toString();
    // An empty line just ended: two line ends in a row (CRLF counting as one).
    if (/(\r\n|\n|\r)(\r\n|\n|\r)$/.test(before) && !(before.endsWith('\r\n') && /[^\r\n]\r\n$/.test(before))) ends.push(i);
  }
  return ends;
}

test('atEventEnd after every prefix matches a reading of the whole stream', () => {
  for (const text of STREAMS) {
    const bytes = Buffer.from(text);
    const expected = eventEnds(text);
    for (let i = 0; i <= bytes.length; i++) {
      const boundary = new EventBoundary();
      // Fed in one-byte chunks, then in two pieces, the answer is the same.
      for (let k = 0; k < i; k++) boundary.see(bytes.subarray(k, k + 1));
      const split = new EventBoundary();
      split.see(bytes.subarray(0, Math.floor(i / 2)));
      split.see(bytes.subarray(Math.floor(i / 2), i));
      const want = i === 0 || expected.includes(i);
      assert.is(boundary.atEventEnd(), want, `${JSON.stringify(text)} after ${i} bytes`);
      assert.is(split.atEventEnd(), want, `${JSON.stringify(text)} after ${i} bytes, in two pieces`);
    }
  }
});

test('eventEnd finds where the event under way ends in the next chunk, whatever was seen before', () => {
  for (const text of STREAMS) {
    const bytes = Buffer.from(text);
    const ends = eventEnds(text);
    for (let i = 1; i < bytes.length; i++) {
      if (ends.includes(i)) continue;
      const boundary = new EventBoundary();
      boundary.see(bytes.subarray(0, i));
      const next = ends.find((end) => end > i)!;
      const found = boundary.eventEnd(bytes.subarray(i));
      // A CR's LF that follows at once is taken with it.
      const want = bytes[next - 1] === 0x0d && bytes[next] === 0x0a ? next + 1 : next;
      assert.is(i + found, want, `${JSON.stringify(text)} from ${i}`);
    }
  }
  const boundary = new EventBoundary();
  boundary.see(Buffer.from('data: {"partial'));
  assert.is(boundary.eventEnd(Buffer.from('": true}')), -1, 'no end in the chunk');
});

test.run();
