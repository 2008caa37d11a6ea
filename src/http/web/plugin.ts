/**
 * The browser-facing part of Engram (DESIGN section 10): the dashboard's pages and the
 * OAuth sign-in and consent pages, in one encapsulated scope. Only here are cookies
 * parsed, forms read, pages rendered and security headers set, so none of it costs the
 * proxy's hot path anything. Pages are server-rendered (Eta through @fastify/view) and
 * work without JavaScript; htmx, served from node_modules, makes some actions inline.
 * Every form carries a CSRF token (double-submit cookie, @fastify/csrf-protection).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import fastifyView from '@fastify/view';
import { Eta } from 'eta';
import type { Deps } from '../../deps.js';
import { toEngramError } from '../../errors.js';
import { SESSION_COOKIE, secureCookies } from './session.js';
import { softBreaks, valueHtml } from './soft-breaks.js';
import { dayHtml, timeHtml } from './time-html.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** What every page's layout reads: the signed-in user, the CSRF token, the page title. */
export interface PageContext {
  title: string;
  [key: string]: unknown;
}

declare module 'fastify' {
  interface FastifyReply {
    /** Renders `views/<name>.eta` inside the layout, with the signed-in user and a CSRF token. */
    page(name: string, context: PageContext, status?: number): Promise<FastifyReply>;
    /**
     * This page's forms may be answered with a redirect to `uri` (the OAuth consent form,
     * to the client's callback): its Content-Security-Policy allows that origin and no other.
     */
    formsRedirectTo(uri: string): void;
  }
}

/**
 * The pages' Content-Security-Policy. Every form posts to Engram, so `form-action` is
 * `'self'`. It also governs where a form's answer may redirect: the OAuth consent form's
 * answer goes back to the client's callback, and that page alone adds its callback's
 * origin (`formsRedirectTo`). No IPv6 literal may appear in a source (CSP's host grammar
 * has none: Chromium reports `http://[::1]:*` invalid and ignores it).
 */
const PAGE_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  upgradeInsecureRequests: null,
};

/**
 * The CSP source that matches `uri`'s origin. An IPv6 host (`http://[::1]:PORT`) cannot
 * be named in CSP, with or without its port: only its scheme can, the narrowest source
 * that Chromium accepts and that lets the redirect through.
 */
export function originSource(uri: string): string {
  const url = new URL(uri);
  return url.hostname.startsWith('[') ? url.protocol : url.origin;
}

export interface WebOptions {
  deps: Deps;
  /** Route groups rendered in this scope (dashboard pages, OAuth consent). */
  pages: FastifyPluginAsync<{ deps: Deps }>[];
}

const FORM_BODY_LIMIT = 256 * 1024;

function asset(file: string, type: string): { body: Buffer; type: string } {
  return { body: readFileSync(file), type };
}

/** The web scope: its pages own `/`, `/login`, `/orgs/...`, `/oauth/authorize`. */
export const webRoutes: FastifyPluginAsync<WebOptions> = async (app, { deps, pages }) => {
  const secure = secureCookies(deps.publicUrl());
  await app.register(fastifyCookie);
  await app.register(fastifyFormbody, { bodyLimit: FORM_BODY_LIMIT });
  await app.register(fastifyCsrf, {
    cookieKey: 'engram_csrf',
    cookieOpts: { path: '/', httpOnly: true, sameSite: 'strict', secure },
    getToken: (request) => (request.body as Record<string, unknown> | undefined)?._csrf as string | undefined ?? (request.headers['x-csrf-token'] as string | undefined),
  });
  await app.register(fastifyHelmet, {
    contentSecurityPolicy: { directives: PAGE_DIRECTIVES },
    // Pages are served over plain http on loopback by default; HSTS only where it is https.
    strictTransportSecurity: secure,
    referrerPolicy: { policy: 'no-referrer' },
  });
  await app.register(fastifyView, {
    engine: { eta: new Eta({ views: path.join(here, 'views'), cache: true, autoEscape: true }) },
    templates: path.join(here, 'views'),
    production: true,
  });

  const assets = new Map([
    ['/assets/htmx.min.js', asset(require.resolve('htmx.org/dist/htmx.min.js'), 'text/javascript; charset=utf-8')],
    ['/assets/engram.css', asset(path.join(here, 'assets', 'engram.css'), 'text/css; charset=utf-8')],
    ['/assets/engram.js', asset(path.join(here, 'assets', 'engram.js'), 'text/javascript; charset=utf-8')],
  ]);
  for (const [url, { body, type }] of assets) {
    app.get(url, (_request, reply) => reply.header('content-type', type).header('cache-control', 'public, max-age=3600').send(body));
  }

  app.decorateRequest('signedIn', undefined);

  app.decorateReply('page', async function (this: FastifyReply, name: string, context: PageContext, status = 200) {
    const request = this.request;
    const csrf = this.generateCsrf();
    this.code(status);
    const now = deps.now();
    // Helpers every view may use: prose with paths (`softBreaks`), one value shown whole (`value`), a moment (`when`), a UTC day (`day`).
    const when = (at: number) => timeHtml(at, now);
    const day = (utcDay: string) => dayHtml(utcDay, now);
    return this.view(`${name}.eta`, { ...context, user: request.signedIn?.user, csrf, path: request.url, signupOpen: deps.config.signup, softBreaks, value: valueHtml, when, day });
  });

  app.decorateReply('formsRedirectTo', function (this: FastifyReply, uri: string) {
    // Helmet again with this page's policy: it replaces the headers the hook set.
    this.helmet({ contentSecurityPolicy: { directives: { ...PAGE_DIRECTIVES, formAction: ["'self'", originSource(uri)] } } });
  });

  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const engram = toEngramError(error);
    const csrfFailure = error.code?.startsWith('FST_CSRF');
    const status = csrfFailure ? 403 : engram.status;
    if (status >= 500) request.log.error({ err: error }, 'a dashboard page failed');
    const message = csrfFailure
      ? 'This form expired or was sent from another site. Go back, reload the page and try again.'
      : status >= 500
        ? 'Something went wrong on our side. Try again in a moment.'
        : engram.message;
    return reply.page('error', { title: status === 404 ? 'Not found' : 'Something went wrong', status, message }, status);
  });
  // The pages, in their own scope: the assets above are the same for everyone, so they
  // neither look the session up nor lose their cache headers.
  await app.register(async (scope) => {
    scope.addHook('onRequest', async (request) => {
      request.signedIn = await deps.accounts.signedIn(request.cookies[SESSION_COOKIE]);
    });
    // Pages are personal: never cached by a browser or a proxy.
    scope.addHook('onSend', async (_request, reply) => {
      reply.header('cache-control', 'no-store');
    });
    for (const routes of pages) await scope.register(routes, { deps });
  });
};

