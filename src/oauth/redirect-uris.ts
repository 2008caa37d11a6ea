/**
 * Which redirect URIs a client may register, and when a presented one is a registered
 * one. OAuth 2.1 §7.5: https, or plain http only on the loopback interface (a native app's
 * local callback, which never crosses a network); no fragment (RFC 6749 §3.1.2). Matching
 * is exact string comparison (OAuth 2.1 §4.1.1), except that a loopback URI matches
 * whatever its port (RFC 8252 §7.3): Claude Code and Codex open their callback on a
 * random port, so they register one URI and come back on another.
 */

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
export const MAX_REDIRECT_URI_CHARS = 2000;

function parse(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

function isLoopbackHttp(url: URL): boolean {
  return url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname);
}

/** Why `uri` may not be registered as a redirect URI; undefined when it may. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_REDIRECT_URI_CHARS) return `a redirect URI is longer than ${MAX_REDIRECT_URI_CHARS} characters`;
  const url = parse(uri);
  if (!url) return `"${uri.slice(0, 100)}" is not an absolute URI`;
  if (uri.includes('#')) return `${url.origin}: a redirect URI may not have a fragment`;
  if (url.username || url.password) return `${url.protocol}//${url.host}: a redirect URI may not carry user information`;
  if (url.protocol === 'https:' || isLoopbackHttp(url)) return undefined;
  if (url.protocol === 'http:') return `${url.origin}: plain http is allowed only on the loopback interface (localhost, 127.0.0.1, [::1]); use https`;
  return `${url.protocol} redirect URIs are not supported: use https, or http on the loopback interface`;
}

/** Whether `given` is one of `registered`: exactly, or a loopback URI that differs only in its port. */
export function isRegisteredRedirect(registered: readonly string[], given: string): boolean {
  if (registered.includes(given)) return true;
  const url = parse(given);
  if (!url || !isLoopbackHttp(url) || given.includes('#') || url.username || url.password) return false;
  return registered.some((candidate) => {
    const other = parse(candidate);
    return (
      other !== undefined &&
      isLoopbackHttp(other) &&
      other.hostname === url.hostname &&
      other.pathname === url.pathname &&
      other.search === url.search
    );
  });
}

/** The redirect URI with the response parameters added to its own query (RFC 6749 §4.1.2). */
export function withParams(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.href;
}
