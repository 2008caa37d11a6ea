/**
 * The one Server-Sent Events parser (WHATWG "interpreting an event stream"), fed with
 * the upstream's chunks as they arrive. Only the extraction side of the tee uses it:
 * the client receives the upstream's bytes untouched.
 */
import type { SseEvent } from './types.js';

export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private lastId: string | undefined;
  private first = true;
  /** A chunk ended in `\r`: a `\n` at the start of the next chunk belongs to it. */
  private pendingCr = false;

  constructor(private readonly onEvent: (event: SseEvent) => void) {}

  push(chunk: Uint8Array): void {
    let text = this.decoder.decode(chunk, { stream: true });
    if (this.first && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.first = false;
    }
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    this.drain();
  }

  /** The stream ended: a trailing event without its blank line is dropped, as the spec says. */
  end(): void {
    this.buffer += this.decoder.decode();
    this.drain();
  }

  private drain(): void {
    let start = 0;
    const buffer = this.buffer;
    for (let i = 0; i < buffer.length; i++) {
      const c = buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(buffer.slice(start, i));
      if (c === 13) {
        if (i + 1 < buffer.length) {
          if (buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer = buffer.slice(start);
  }

  private line(line: string): void {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      // `retry` and unknown fields are ignored: Engram never reconnects to an upstream.
    }
  }

  private dispatch(): void {
    if (this.data.length === 0) {
      this.event = '';
      return;
    }
    const event: SseEvent = { event: this.event || 'message', data: this.data.join('\n') };
    if (this.lastId !== undefined) event.id = this.lastId;
    this.data = [];
    this.event = '';
    this.onEvent(event);
  }
}
