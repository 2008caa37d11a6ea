import type { FastifyReply } from 'fastify';

/**
 * Runs `work` for as long as the one asking is there: its signal aborts when the reply's
 * socket closes before the answer is sent (Node fires the request's own `close` once its
 * body is read, so the reply's is the one that means "gone"). Work the asker left resolves
 * `undefined`, not an error: no one is left to answer, and leaving is not a failure to log.
 */
export async function whileAsked<T>(reply: FastifyReply, work: (signal: AbortSignal) => Promise<T>): Promise<T | undefined> {
  const gone = new AbortController();
  reply.raw.once('close', () => gone.abort());
  try {
    return await work(gone.signal);
  } catch (error) {
    if (gone.signal.aborted) return undefined;
    throw error;
  }
}
