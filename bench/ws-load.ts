/**
 * The Responses side of the load generator: a WebSocket client for Engram's WebSocket
 * mode (one `response.create` frame per turn, events back one per frame, ending with
 * `response.completed` or `error`), and the same turn over HTTP streaming against the
 * upstream called directly, which has no WebSocket. Both report the time to the first
 * event and the response the turn ended with, so a chain can continue from it.
 */
import WebSocket from 'ws';
import type { Pool } from 'undici';

export interface Turn {
  /** From sending the request (frame or POST) to the first event (frame or body chunk). */
  firstEventMs: number;
  /** To the end of the turn (`response.completed`, an error, or a timeout). */
  ms: number;
  ok: boolean;
  error?: string;
  /** Of the `response.completed` event. */
  responseId?: string;
  output: unknown[];
}

const TYPE = /^\{\s*"type"\s*:\s*"([^"]+)"/;

/** The event's type, read from the front of the JSON without parsing the rest. */
function typeOf(text: string): string | undefined {
  const found = TYPE.exec(text);
  if (found) return found[1];
  try {
    const event = JSON.parse(text) as { type?: unknown };
    return typeof event.type === 'string' ? event.type : undefined;
  } catch {
    return undefined;
  }
}

function completed(text: string): Pick<Turn, 'responseId' | 'output'> {
  const { response } = JSON.parse(text) as { response: { id: string; output: unknown[] } };
  return { responseId: response.id, output: response.output };
}

interface Pending {
  started: number;
  firstEventMs: number;
  finish(turn: Omit<Turn, 'firstEventMs' | 'ms'>): void;
}

/** One WebSocket connection to `<agent base>/v1/responses`, one turn at a time. */
export class ResponsesSocket {
  private pending: Pending | undefined;
  private closedBecause: string | undefined;

  private constructor(private readonly socket: WebSocket) {
    socket.on('message', (data: WebSocket.RawData) => this.onFrame(data.toString()));
    socket.on('close', (code, reason) => this.onGone(`connection closed (${code} ${reason.toString()})`));
    socket.on('error', (error) => this.onGone(String(error)));
  }

  static open(url: string, token: string, timeoutMs = 30_000): Promise<ResponsesSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false, handshakeTimeout: timeoutMs });
      const failed = (error: unknown) => {
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(error instanceof Error ? error : new Error(String(error)));
      };
      socket.once('unexpected-response', (_request, response) => failed(new Error(`upgrade refused: HTTP ${response.statusCode}`)));
      socket.once('error', failed);
      socket.once('open', () => {
        socket.removeAllListeners();
        resolve(new ResponsesSocket(socket));
      });
    });
  }

  /** Sends one `response.create` and waits for the end of its response. */
  turn(frame: Record<string, unknown>, timeoutMs = 30_000): Promise<Turn> {
    if (this.pending) throw new Error('a turn is already in flight on this connection');
    return new Promise<Turn>((resolve) => {
      const started = performance.now();
      const timer = setTimeout(() => pending.finish({ ok: false, error: `no response.completed within ${timeoutMs} ms`, output: [] }), timeoutMs);
      const pending: Pending = {
        started,
        firstEventMs: NaN,
        finish: (end) => {
          clearTimeout(timer);
          this.pending = undefined;
          resolve({ firstEventMs: pending.firstEventMs, ms: performance.now() - started, ...end });
        },
      };
      if (this.closedBecause !== undefined) {
        pending.finish({ ok: false, error: this.closedBecause, output: [] });
        return;
      }
      this.pending = pending;
      this.socket.send(JSON.stringify({ type: 'response.create', ...frame }));
    });
  }

  private onFrame(text: string): void {
    const pending = this.pending;
    if (!pending) return;
    if (Number.isNaN(pending.firstEventMs)) pending.firstEventMs = performance.now() - pending.started;
    const type = typeOf(text);
    if (type === 'response.completed') pending.finish({ ok: true, ...completed(text) });
    else if (type === 'error' || type === 'response.failed' || type === 'response.incomplete') {
      pending.finish({ ok: false, error: text.slice(0, 300), output: [] });
    }
  }

  private onGone(why: string): void {
    this.closedBecause ??= why;
    this.pending?.finish({ ok: false, error: why, output: [] });
  }

  close(): Promise<void> {
    if (this.socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => (this.socket.terminate(), resolve()), 5000);
      this.socket.once('close', () => (clearTimeout(timer), resolve()));
      this.socket.close(1000);
    });
  }
}

/**
 * One streamed `POST /v1/responses` on `pool` (the upstream called directly): the time
 * to the first body chunk, and the `response.completed` event's id and output.
 */
export async function httpTurn(pool: Pool, path: string, token: string, body: Buffer): Promise<Turn> {
  const started = performance.now();
  const response = await pool.request({
    path,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
  });
  let firstEventMs = NaN;
  const chunks: Buffer[] = [];
  for await (const chunk of response.body) {
    if (Number.isNaN(firstEventMs)) firstEventMs = performance.now() - started;
    chunks.push(chunk as Buffer);
  }
  const ms = performance.now() - started;
  const text = Buffer.concat(chunks).toString('utf8');
  const at = text.indexOf('event: response.completed\ndata: ');
  if (response.statusCode !== 200 || at < 0) {
    return { firstEventMs, ms, ok: false, error: `HTTP ${response.statusCode}: ${text.slice(0, 300)}`, output: [] };
  }
  const data = text.slice(at + 'event: response.completed\ndata: '.length, text.indexOf('\n', at + 'event: response.completed\ndata: '.length));
  return { firstEventMs, ms, ok: true, ...completed(data) };
}
