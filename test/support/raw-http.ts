/**
 * HTTP/1.1 over a bare socket, for what no client library does on purpose: declare a
 * body and not send it, send it a byte at a time, hold a connection open. Tells what the
 * server answered, when, and whether it closed the connection.
 */
import net from 'node:net';

export interface RawRequest {
  method?: string;
  /** Path and query, e.g. `/v0/orgs/o/agents/a/v1/chat/completions`. */
  path: string;
  headers?: Record<string, string>;
  /** Bytes sent right after the headers. */
  body?: Buffer | string;
  /** Then this many more bytes, one every `dripMs` (a slow-loris body). */
  drip?: { bytes: number; everyMs: number };
  /** Send the header lines this slowly (a slow-loris request line and headers). */
  headerDripMs?: number;
  /** Send `expect: 100-continue` and the body only once the server says `100 Continue`. */
  expectContinue?: boolean;
  /** Give up waiting after this long. */
  timeoutMs?: number;
}

export interface RawAnswer {
  /** Undefined when nothing was answered. */
  status?: number;
  headers: Record<string, string>;
  body: string;
  /** From the first byte sent to the first byte of the answer. */
  answeredAfterMs?: number;
  /** The server ended or reset the connection (else the client gave up, or it stayed open). */
  closedByServer: boolean;
  /** From the first byte sent to the server closing the connection. */
  closedAfterMs?: number;
  /** Bytes of the body written when the answer arrived, or in all. */
  bodyBytesWritten: number;
  /** The server sent `100 Continue` (then the final answer is what follows it). */
  continued: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const CONTINUE = /^HTTP\/1\.1 100 Continue\r\n\r\n/;

function parseAnswer(text: string, answer: Pick<RawAnswer, 'status' | 'headers' | 'body'> & { continued?: boolean }): void {
  if (CONTINUE.test(text)) {
    answer.continued = true;
    text = text.replace(CONTINUE, '');
  }
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  answer.status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  answer.headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
  const raw = text.slice(end + 4);
  answer.body = answer.headers['transfer-encoding'] === 'chunked' ? dechunk(raw) : raw;
}

function dechunk(raw: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd === -1) return out;
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (!size) return out;
    out += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
}

/**
 * Sends `request` to `url` (an `http://host:port` base) and resolves once the server
 * closed the connection, or `timeoutMs` passed (default 5 s), or an answer arrived and
 * 300 ms went by without the server closing.
 */
export function rawRequest(url: string, request: RawRequest): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  const answer: RawAnswer = { headers: {}, body: '', closedByServer: false, bodyBytesWritten: 0, continued: false };
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let started = 0;
    let text = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      parseAnswer(text, answer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(finish, request.timeoutMs ?? 5_000);
    const closed = () => {
      if (!answer.closedByServer && !done) {
        answer.closedByServer = true;
        answer.closedAfterMs = performance.now() - started;
      }
      finish();
    };
    let goOn: () => void = () => undefined;
    const continued = new Promise<void>((resolve) => (goOn = resolve));
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (CONTINUE.test(text) && text.replace(CONTINUE, '') === '') return goOn();
      if (answer.answeredAfterMs === undefined) {
        answer.answeredAfterMs = performance.now() - started;
        setTimeout(finish, 300);
      }
    });
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', () => undefined);
    socket.once('connect', async () => {
      started = performance.now();
      const head = [`${request.method ?? 'POST'} ${request.path} HTTP/1.1`, `host: ${hostname}:${port}`];
      for (const [name, value] of Object.entries(request.headers ?? {})) head.push(`${name}: ${value}`);
      if (request.expectContinue) head.push('expect: 100-continue');
      const headText = head.join('\r\n') + '\r\n\r\n';
      if (request.headerDripMs) {
        for (const line of headText.split(/(?<=\r\n)/)) {
          if (done || socket.destroyed) return;
          socket.write(line);
          await sleep(request.headerDripMs);
        }
      } else {
        socket.write(headText);
      }
      if (request.expectContinue) await continued;
      if (request.body !== undefined && !socket.destroyed && !done) {
        const body = Buffer.from(request.body);
        await new Promise<void>((written) => socket.write(body, () => written()));
        if (answer.answeredAfterMs === undefined) answer.bodyBytesWritten += body.length;
      }
      for (let i = 0; i < (request.drip?.bytes ?? 0); i++) {
        await sleep(request.drip!.everyMs);
        if (done || socket.destroyed) return;
        socket.write('a');
        if (answer.answeredAfterMs === undefined) answer.bodyBytesWritten++;
      }
    });
  });
}

export interface SendingRequest {
  path: string;
  /** Give the body's length (`content-length`) or `transfer-encoding: chunked`; chunk framing is then the caller's (the bytes are sent as given). */
  headers: Record<string, string>;
  /** Body bytes to send in all; then the client ends its side and waits for the server to close. */
  bytes: number;
  /** Bytes a write (64 KB by default). */
  chunkBytes?: number;
  /** Pause between writes; without it, writes go as fast as the connection takes them. */
  everyMs?: number;
  /**
   * Read nothing until the whole body is sent or sending failed: a client too busy to
   * read its answer while it uploads (as undici is on a loaded machine).
   */
  readLate?: boolean;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
}

export interface SendingAnswer {
  status?: number;
  headers: Record<string, string>;
  body: string;
  /** Bytes handed to the socket before it failed, or in all. */
  bytesSent: number;
  /** From the first byte sent to the first byte of the answer (when it was read). */
  answeredAfterMs?: number;
  /** From the first byte sent to the server's FIN (it will send nothing more). */
  endedAfterMs?: number;
  /** From the first byte sent to the connection's end: reset by the server, or closed by both. */
  closedAfterMs?: number;
  /** The socket's error code (`EPIPE`, `ECONNRESET`), when it failed. */
  error?: string;
}

/**
 * Sends a body of `bytes` on a connection that stays half open (the client keeps sending
 * after the server's FIN, as a client that has not looked at its answer yet does), and
 * reports what the server answered and when it cut the connection.
 */
export function sendBody(url: string, request: SendingRequest): Promise<SendingAnswer> {
  const { hostname, port } = new URL(url);
  const answer: SendingAnswer = { headers: {}, body: '', bytesSent: 0 };
  const chunk = Buffer.alloc(request.chunkBytes ?? 64 * 1024, 'a');
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let started = 0;
    let text = '';
    let done = false;
    let reading = false;
    const since = () => performance.now() - started;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      parseAnswer(text, answer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(finish, request.timeoutMs ?? 30_000);
    const read = () => {
      if (reading) return;
      reading = true;
      socket.on('data', (data: Buffer) => {
        answer.answeredAfterMs ??= since();
        text += data.toString('utf8');
      });
      socket.resume();
    };
    if (request.readLate) socket.pause();
    else read();
    socket.on('end', () => (answer.endedAfterMs ??= since()));
    socket.on('error', (error: NodeJS.ErrnoException) => (answer.error ??= error.code ?? error.message));
    socket.on('close', () => {
      answer.closedAfterMs ??= since();
      finish();
    });
    socket.once('connect', async () => {
      started = performance.now();
      const head = [`POST ${request.path} HTTP/1.1`, `host: ${hostname}:${port}`];
      for (const [name, value] of Object.entries(request.headers)) head.push(`${name}: ${value}`);
      socket.write(head.join('\r\n') + '\r\n\r\n');
      while (answer.bytesSent < request.bytes && !socket.destroyed && !done) {
        const piece = chunk.subarray(0, Math.min(chunk.length, request.bytes - answer.bytesSent));
        answer.bytesSent += piece.length;
        if (!socket.write(piece)) await drained(socket);
        if (request.everyMs) await sleep(request.everyMs);
      }
      read();
      if (!socket.destroyed) socket.end();
    });
  });
}

/** Until the socket takes more writes, or closes. */
function drained(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}
