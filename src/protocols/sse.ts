/**
 * The one Server-Sent Events parser (WHATWG "interpreting an event stream"), fed with
 * the upstream's chunks as they arrive. Only the extraction side of the tee uses it:
 * the client receives the upstream's bytes untouched.
 *
 * It works on bytes, in linear time whatever their shape: each byte is scanned once for a
 * line end (never inside a UTF-8 sequence), and a line arriving in many chunks is kept as
 * its pieces and joined once. What it holds is bounded by `maxEventBytes`: a longer event
 * is counted through to its end, never kept, and not dispatched.
 */
import type { SseEvent } from './types.js';

export interface SseParserOptions {
  /**
   * Largest event kept, in bytes: its `data` and `event` lines (with their line ends) and the line being read.
   * A larger one is skipped to its end and reported to `onOversize` instead of dispatched.
   * Default: no limit.
   */
  maxEventBytes?: number;
  /** An event went over `maxEventBytes`: called once for it, when it ends (or the stream does), with its size in bytes. */
  onOversize?: (bytes: number) => void;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export class SseParser {
  private readonly maxEventBytes: number;
  private readonly onOversize: (bytes: number) => void;
  /** The line being read, in the pieces it arrived in. */
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  /** The line being read is a comment: it is not kept. */
  private comment = false;
  private data: string[] = [];
  private dataBytes = 0;
  private event = '';
  private eventBytes = 0;
  /** Size of the current event, once it went over the limit (it is then only counted). */
  private skipped: number | undefined;
  private lastId: string | undefined;
  /** Bytes of a byte order mark matched at the start of the stream, until it is known whether there is one. */
  private bom: number | undefined = 0;
  /** A chunk ended in `\r`: a `\n` at the start of the next chunk belongs to it. */
  private pendingCr = false;

  constructor(
    private readonly onEvent: (event: SseEvent) => void,
    options: SseParserOptions = {},
  ) {
    this.maxEventBytes = options.maxEventBytes ?? Infinity;
    this.onOversize = options.onOversize ?? (() => undefined);
  }

  /** The parser keeps references to `chunk` until its last line ends: the caller must not reuse it. */
  push(chunk: Uint8Array): void {
    let bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.bom !== undefined) {
      // A byte order mark opening the stream is not part of the first line (it may come split).
      let matched = 0;
      while (matched < bytes.length && this.bom + matched < 3 && bytes[matched] === BOM[this.bom + matched]) matched++;
      if (this.bom + matched === 3) {
        this.bom = undefined;
        bytes = bytes.subarray(matched);
      } else if (matched === bytes.length) {
        this.bom += matched;
        return;
      } else {
        const content = BOM.subarray(0, this.bom);
        this.bom = undefined;
        this.keep(content);
      }
    }
    if (bytes.length === 0) return;
    let start = 0;
    if (this.pendingCr && bytes[0] === LF) start = 1;
    this.pendingCr = false;
    // The next CR and LF at or after `start`; -1 once there is none left in this chunk.
    let lf = bytes.indexOf(LF, start);
    let cr = bytes.indexOf(CR, start);
    while (start < bytes.length) {
      if (lf !== -1 && lf < start) lf = bytes.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = bytes.indexOf(CR, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) {
        this.keep(bytes.subarray(start));
        return;
      }
      this.keep(bytes.subarray(start, end));
      this.line();
      start = end + 1;
      if (bytes[end] === CR) {
        if (end + 1 === bytes.length) this.pendingCr = true;
        else if (bytes[end + 1] === LF) start++;
      }
    }
  }

  /** The stream ended: a trailing event without its blank line is dropped, as the spec says. */
  end(): void {
    if (this.skipped !== undefined) this.onOversize(this.skipped + this.pendingBytes);
    this.skipped = undefined;
    this.pieces = [];
    this.pendingBytes = 0;
  }

  /** Part of the line being read. */
  private keep(piece: Buffer): void {
    if (piece.length === 0) return;
    if (this.pendingBytes === 0) this.comment = piece[0] === COLON;
    this.pendingBytes += piece.length;
    if (this.comment || this.skipped !== undefined) return;
    if (this.dataBytes + this.eventBytes + this.pendingBytes > this.maxEventBytes) {
      // Over the limit: what was kept of the event goes; the rest of it is only counted.
      this.skipped = this.dataBytes + this.eventBytes;
      this.data = [];
      this.dataBytes = 0;
      this.event = '';
      this.eventBytes = 0;
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
  }

  /** The line being read has ended. */
  private line(): void {
    const size = this.pendingBytes;
    const pieces = this.pieces;
    this.pieces = [];
    this.pendingBytes = 0;
    if (this.skipped !== undefined) {
      if (size > 0) {
        this.skipped += size + 1;
        return;
      }
      const skipped = this.skipped;
      this.skipped = undefined;
      this.onOversize(skipped);
      return;
    }
    if (size === 0) {
      this.dispatch();
      return;
    }
    if (this.comment) return;
    const line = (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, size)).toString('utf8');
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'data':
        this.data.push(value);
        this.dataBytes += size + 1;
        break;
      case 'event':
        this.event = value;
        this.eventBytes = size + 1;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      // `retry` and unknown fields are ignored: Engram never reconnects to an upstream.
    }
  }

  private dispatch(): void {
    const data = this.data;
    const name = this.event;
    this.data = [];
    this.dataBytes = 0;
    this.event = '';
    this.eventBytes = 0;
    if (data.length === 0) return;
    const event: SseEvent = { event: name || 'message', data: data.join('\n') };
    if (this.lastId !== undefined) event.id = this.lastId;
    this.onEvent(event);
  }
}
