/**
 * The CLI's side of the management API: global fetch, the admin (or agent) token as a
 * bearer, and the server's error envelope turned into a readable `ApiError`.
 */
import { ApiError, CliError } from './errors.js';

const TIMEOUT_MS = 60_000;

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

interface ErrorEnvelope {
  error?: { message?: string; code?: string; param?: string | null };
}

/** A body read as JSON; undefined when it is not JSON (or empty). */
export function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export class ApiClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  async request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const response = await this.send(method, path, body, AbortSignal.timeout(TIMEOUT_MS));
    const text = await response.text();
    if (!response.ok) throw this.failure(response.status, text);
    return jsonOf(text) as T;
  }

  /**
   * A GET whose body is read as it arrives (an export of any size): no overall timeout,
   * since a large body legitimately takes long; an unreachable server still fails fast.
   */
  async stream(path: string): Promise<ReadableStream<Uint8Array>> {
    const response = await this.send('GET', path, undefined);
    if (!response.ok || !response.body) throw this.failure(response.status, await response.text());
    return response.body;
  }

  private async send(method: Method, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      return await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (error) {
      throw this.unreachable(error);
    }
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** A GET whose 404 means "absent" rather than a failure. */
  async find<T>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  patch<T>(path: string, body: unknown): Promise<T> {
    return this.request<T>('PATCH', path, body);
  }

  delete<T>(path: string): Promise<T> {
    return this.request<T>('DELETE', path);
  }

  private unreachable(error: unknown): CliError {
    const cause = (error as { cause?: { code?: string } }).cause;
    if ((error as Error).name === 'TimeoutError') {
      return new CliError(`The Engram server at ${this.baseUrl} did not answer within ${TIMEOUT_MS / 1000} s.`);
    }
    const reason = cause?.code ?? (error as Error).message;
    return new CliError(
      `Cannot reach the Engram server at ${this.baseUrl} (${reason}).\n` +
        'Start it with `engram serve` (or `npm start` in the Engram checkout), or point the CLI at a ' +
        'running server with --url or ENGRAM_URL.',
    );
  }

  private failure(status: number, text: string): ApiError {
    const detail = (jsonOf(text) as ErrorEnvelope | undefined)?.error;
    const message = detail?.message ?? (text.trim().slice(0, 200) || `HTTP ${status}`);
    const param = detail?.param ? ` [${detail.param}]` : '';
    let hint = '';
    if (status === 401) {
      hint =
        '\nThe server rejected the token. Pass the admin token with --admin-token or ENGRAM_ADMIN_TOKEN, ' +
        'or run the CLI where it can read <data dir>/admin-token (--data-dir).';
    }
    return new ApiError(`${message}${param} (HTTP ${status}${detail?.code ? `, ${detail.code}` : ''})${hint}`, status, detail?.code);
  }
}
