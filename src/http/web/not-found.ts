/**
 * A page for a person who followed a wrong link: the app's not-found handler is shared by
 * every route group (one per prefix, Fastify's rule), so a browser asking for HTML gets
 * this instead of the API's JSON error.
 */
import type { FastifyRequest } from 'fastify';
import { agentBaseUrlPattern, shortBaseUrl } from '../../domain/base-urls.js';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function wantsPage(request: FastifyRequest): boolean {
  return request.method === 'GET' && (request.headers.accept ?? '').includes('text/html');
}

export function notFoundPage(path: string): string {
  const shown = path.slice(0, 200).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · Engram</title><link rel="stylesheet" href="/assets/engram.css"></head>
<body><header class="top"><a class="brand" href="/">Engram</a></header>
<main><div class="card narrow"><h1>Not found</h1><p>There is no page at <span class="mono">${shown}</span>.</p><p><a href="/">Back to the dashboard</a></p></div></main>
</body></html>`;
}

/** `/v1/...`, or the same below an agent's own base URL. */
const PROXY_PATH = /^(?:\/v0\/orgs\/[^/]+\/agents\/[^/]+)?\/v1(?:\/|$)/;

/**
 * For a provider path Engram does not serve (a typo, an endpoint it does not proxy): the
 * message names the base URLs that exist, so a client configured with the wrong one
 * learns the right one. Undefined for any other path.
 */
export function unknownProxyPath(method: string, path: string, publicUrl: string): string | undefined {
  if (!PROXY_PATH.test(path)) return undefined;
  return (
    `No route for ${method} ${path.slice(0, 200)}: Engram serves POST /v1/chat/completions, /v1/messages, /v1/responses and GET /v1/models ` +
    `below the base URL ${shortBaseUrl(publicUrl)} (the agent is the token's) or ${agentBaseUrlPattern(publicUrl)}`
  );
}
