/** A browser-like client for the dashboard's forms over plain HTTP: a cookie jar and the CSRF token of the last page. */

export interface WebAnswer {
  status: number;
  location: string | null;
  headers: Headers;
  text: string;
}

export class WebSession {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly baseUrl: string) {}

  async get(path: string): Promise<WebAnswer> {
    return this.#send(path, { method: 'GET' });
  }

  /** Posts a form with the CSRF token of the last page read (unless `_csrf` is given). */
  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<WebAnswer> {
    const body = new URLSearchParams({ _csrf: this.csrf, ...fields }).toString();
    return this.#send(path, { method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers } });
  }

  /** Signs up (or logs in, when `login`) through the forms; the session cookie is kept. */
  async signIn(email: string, password: string, options: { login?: boolean } = {}): Promise<WebAnswer> {
    const path = options.login ? '/login' : '/signup';
    await this.get(path);
    return this.post(path, { email, password, next: '/' });
  }

  async #send(path: string, init: RequestInit): Promise<WebAnswer> {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const response = await fetch(this.baseUrl + path, { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text)?.[1];
    if (token) this.csrf = token;
    return { status: response.status, location: response.headers.get('location'), headers: response.headers, text };
  }
}

/** The text a page shows, without its tags (`<wbr>`, the `<span>`s that keep a value's pieces whole): what a person reads. */
export function shownText(html: string): string {
  return html.replace(/<[^>]*>/g, '');
}
