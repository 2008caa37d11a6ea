/**
 * The error handler of the route groups that answer in plain JSON (management, hooks):
 * the catalogue's error in the chat-completions envelope, with the status as the answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { openAiErrorBody, toEngramError } from '../errors.js';

/** `what` names the group in the log line of a 5xx. */
export function jsonErrorHandler(what: string) {
  return (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    // The management API caps bodies below ENGRAM_BODY_LIMIT (its own fixed limit), so the route's figure is the one to name.
    const engramError = toEngramError(error, { what: `The ${what} request body`, bytes: request.routeOptions.bodyLimit });
    if (engramError.status >= 500) request.log.error({ err: error }, `${what} request failed`);
    if (engramError.code === 'unauthorized') reply.header('www-authenticate', 'Bearer realm="engram"');
    // A body left unread (refused before it was read) cannot be followed by another request on the connection.
    if (!request.raw.complete) reply.header('connection', 'close');
    return reply.code(engramError.status).send(openAiErrorBody(engramError));
  };
}
