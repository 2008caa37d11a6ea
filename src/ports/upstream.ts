import type { Readable } from 'node:stream';
import type { UpstreamOwner } from '../domain/types.js';

export interface UpstreamRequest {
  url: string;
  method: 'GET' | 'POST' | 'HEAD' | 'DELETE';
  headers: Record<string, string>;
  body?: Buffer | string;
  signal?: AbortSignal;
  /**
   * Longest wait for the response headers when shorter than the client's own: a provider
   * sends a streamed answer's headers at once, so a long wait only suits answers sent whole.
   */
  headersTimeoutMs?: number;
  /**
   * Who set the URL (`UpstreamSettings.setBy`): the client connects under that setter's
   * address policy, on connections of its own (a connection opened for the operator's
   * upstream is never reused for a user's). The operator's when absent.
   */
  setBy?: UpstreamOwner;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it arrives; must be consumed or destroyed. */
  body: Readable;
}

/**
 * HTTP client for upstream providers. Rejects with `EngramError('upstream_unreachable')`
 * when no connection can be made, `EngramError('upstream_timeout')` when headers or a
 * body chunk take longer than the configured timeout, and an `AbortError` when the
 * signal fires. Any HTTP status resolves.
 */
export interface UpstreamClient {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  /**
   * The same translation for an error raised later, while the response body is read:
   * an `EngramError` from the catalogue, or the error itself when it is an abort.
   */
  failure(error: unknown): unknown;
  close(): Promise<void>;
}
