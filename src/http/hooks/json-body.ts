import { EngramError, tooLarge } from '../../errors.js';

/** A small JSON body read from its stream: `{}` when empty; 400 when not JSON, 413 past `limit` bytes. */
export async function readJsonBody(body: AsyncIterable<Buffer | string>, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    size += chunk.length;
    if (size > limit) throw tooLarge({ what: 'The body', bytes: limit });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new EngramError('invalid_json', `The body is not JSON: ${(error as Error).message}`);
  }
}
