/**
 * CORS for what a browser-based MCP client calls directly: the metadata documents, the
 * registration, token and revocation endpoints, and the global MCP server. Any origin
 * may call them because none of them uses cookies: a request carries its own credential
 * (a code, a refresh token, a bearer token) or none, so a foreign page gains nothing it
 * could not do from its own server. The dashboard's pages never get these headers.
 */
import type { FastifyInstance } from 'fastify';

const ALLOWED_HEADERS = 'authorization, content-type, mcp-protocol-version, mcp-session-id, last-event-id';
/** What a browser client must read: the challenge that starts discovery, and the MCP session headers. */
const EXPOSED_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version';

/** Adds the CORS headers to every answer of `app`'s scope and answers the preflight of each of `paths`. */
export function allowAnyOrigin(app: FastifyInstance, paths: readonly string[]): void {
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', EXPOSED_HEADERS);
  });
  for (const path of paths) {
    app.options(path, async (_request, reply) =>
      reply
        .code(204)
        .header('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS')
        .header('access-control-allow-headers', ALLOWED_HEADERS)
        .header('access-control-max-age', '600')
        .send(),
    );
  }
}
