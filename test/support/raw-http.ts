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

function parseAnswer(text: string, answer: RawAnswer): void {
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
