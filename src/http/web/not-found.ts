/**
 * A page for a person who followed a wrong link: the app's not-found handler is shared by
 * every route group (one per prefix, Fastify's rule), so a browser asking for HTML gets
 * this instead of the API's JSON error.
 */
import type { FastifyRequest } from 'fastify';

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
