import type { ServerResponse } from 'node:http';
import type { SseEvent } from './types.js';

export function encodeSseEvent(e: SseEvent): string {
  return `${e.event === undefined ? '' : `event: ${e.event}\n`}data: ${e.data}\n\n`;
}

export interface WriteSseOptions {
  chunkDelayMs?: number;
  /** After writing this many events, destroy the socket instead of ending the response. */
  breakAfter?: number;
  /** After writing this many events, write nothing more and leave the response open. */
  stallAfter?: number;
}

function write(res: ServerResponse, chunk: string): Promise<void> {
  return new Promise((resolve) => res.write(chunk, () => resolve()));
}

/** Resolves after `ms`, or early when the response closes (client gone, server closing). */
function pause(res: ServerResponse, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      res.off('close', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    res.once('close', done);
  });
}

/**
 * Writes `opening`, then `repeated` over and over as fast as the client drains it, until
 * the response closes (the client went away, the server is closing).
 */
export async function writeEndless(res: ServerResponse, headers: Record<string, string>, opening: string, repeated: string): Promise<void> {
  res.writeHead(200, headers);
  res.flushHeaders();
  const chunk = Buffer.from(repeated);
  let closed = false;
  res.once('close', () => (closed = true));
  if (opening !== '' && !res.write(opening)) await drained(res);
  while (!closed && !res.destroyed) {
    if (!res.write(chunk)) await drained(res);
  }
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Writes one event per chunk (so the client sees several reads), waiting for each
 * write to flush so a break really lands after exactly N events.
 */
export async function writeSse(
  res: ServerResponse,
  headers: Record<string, string>,
  events: SseEvent[],
  options: WriteSseOptions = {},
): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
  const limit = options.breakAfter ?? options.stallAfter ?? events.length;
  for (let i = 0; i < Math.min(limit, events.length); i++) {
    if (res.destroyed) return;
    if (i > 0 && options.chunkDelayMs) await pause(res, options.chunkDelayMs);
    if (res.destroyed) return;
    await write(res, encodeSseEvent(events[i]));
  }
  if (options.stallAfter !== undefined) return;
  if (options.breakAfter !== undefined) {
    // Let what was written (at least the headers) reach the wire, then cut the connection
    // with no terminating chunk: the client sees a body that died midway.
    const socket = res.socket;
    if (socket && !socket.destroyed) await new Promise<void>((resolve) => socket.write('', () => resolve()));
    socket?.destroy();
    return;
  }
  res.end();
}
