/** Reading an upstream response body (a Node stream) with a size bound. */
import type { Readable } from 'node:stream';

/** A body past the reader's bound: the upstream answered more than a job ever reads. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/**
 * Collects `body` as UTF-8 text. Past `maxBytes` the stream is destroyed and the promise
 * rejects, so a misbehaving upstream cannot fill memory.
 */
export async function readText(body: Readable, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buffer.length;
    if (size > maxBytes) {
      body.destroy();
      throw new BodyTooLargeError(`response body larger than ${maxBytes} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Drains and discards a body that is not needed, so the connection can be reused. */
export async function discard(body: Readable): Promise<void> {
  try {
    for await (const _ of body) {
      // Reading is the point: the chunks are dropped.
    }
  } catch {
    // A body that fails while being discarded changes nothing.
  }
}
