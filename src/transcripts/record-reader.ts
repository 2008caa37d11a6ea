/**
 * The records of an upload, from its bytes in any split: JSON lines, or one JSON document
 * when the first line opens one that does not close on it (pretty-printed). A line is
 * parsed with `JSON.parse` when it is short, the usual case; a longer line, and a whole
 * document, are read as they arrive (`JsonRecordStream`), so no step holds the event loop
 * for long or holds more than one record.
 *
 * Deciding that the body is a document takes a look ahead: the first line and what
 * follows it are checked as one document, and kept, for up to `DOCUMENT_PROOF` bytes (or
 * to the end of a smaller body). If they fail to parse as one, the body is JSON lines
 * whose first line is damaged, and what was kept is read again as lines; if not (a
 * document that merely stops short included), it is read again as the document. Either
 * way the caller feeds the returned bytes back in.
 */
import { EngramError } from '../errors.js';
import { JsonRecordStream, JsonRecordTooLarge, JsonSyntaxError } from './json-stream.js';

export interface RecordReaderOptions {
  /** A longer line is skipped (a longer record of a document refuses the upload). */
  maxLineBytes: number;
  /** Most JSON tokens in one record. */
  maxRecordTokens: number;
}

const NEWLINE = 0x0a;
const NEWLINE_BYTES = Buffer.from('\n');
/** A line up to this size is parsed at once (about a millisecond at worst); a longer one as it arrives. */
const PARSE_AT_ONCE = 128 * 1024;
/** How much of a body that looks like a document must parse as one before it is taken for one. */
const DOCUMENT_PROOF = 1024 * 1024;

type Mode = 'lines' | 'probe' | 'document' | 'done';

export class RecordReader {
  records = 0;
  /** Lines that are not JSON (besides a cut last line), lines over the limit, a document broken off. */
  skipped = 0;
  truncatedTail = false;
  document = false;

  private mode: Mode = 'lines';
  /** Non-empty lines seen. */
  private lines = 0;
  /** The current line, while it is short enough to be parsed at once. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The current line, read as it arrives once it is longer. */
  private stream: JsonRecordStream | undefined;
  /** The current line is over the limit or not JSON: the rest of it is ignored. */
  private bad: 'too_large' | 'invalid' | undefined;
  /** While deciding whether the body is a document: its first line, what followed, and the check. */
  private first: Buffer | undefined;
  private kept: Buffer[] = [];
  private keptBytes = 0;
  private probe: JsonRecordStream | undefined;
  private doc: JsonRecordStream | undefined;

  constructor(
    private readonly onRecord: (record: unknown) => void,
    private readonly options: RecordReaderOptions,
  ) {}

  /** The next bytes of the body. Returns bytes to feed again, before any others, when it changed its reading. */
  write(bytes: Buffer): Buffer[] | undefined {
    switch (this.mode) {
      case 'lines':
        return this.writeLines(bytes);
      case 'probe':
        return this.writeProbe(bytes);
      case 'document':
        this.writeDocument(bytes);
        return undefined;
      case 'done':
        return undefined;
    }
  }

  /** The body ended. Returns bytes to feed again (then `end()` again) when it changed its reading. */
  end(): Buffer[] | undefined {
    switch (this.mode) {
      case 'lines':
        // No newline after the last line: unless it parses, it is a line cut short, not a bad line.
        if (this.pendingBytes > 0 || this.stream || this.bad) this.endLine(true);
        break;
      case 'probe':
        // A body that parsed as one document to its end, or to where it stops short.
        try {
          this.probe!.end();
        } catch (error) {
          if (!(error instanceof JsonSyntaxError)) throw error;
        }
        return this.isADocument();
      case 'document':
        try {
          this.doc!.end();
        } catch (error) {
          // A document that stops short: what came before its end is used, as with a cut last line.
          if (!(error instanceof JsonSyntaxError)) throw error;
          this.truncatedTail = true;
        }
        break;
    }
    this.mode = 'done';
    return undefined;
  }

  private record(record: unknown): void {
    this.records++;
    this.onRecord(record);
  }

  /** A line's value: an array is spread into its elements. */
  private value(value: unknown): void {
    if (Array.isArray(value)) for (const item of value) this.record(item);
    else this.record(value);
  }

  private streamOptions(events: boolean, onRecord: (record: unknown) => void) {
    return { events, maxRecordBytes: this.options.maxLineBytes, maxRecordTokens: this.options.maxRecordTokens, onRecord };
  }

  private writeLines(bytes: Buffer): Buffer[] | undefined {
    let start = 0;
    for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
      this.append(bytes.subarray(start, end));
      this.endLine(false);
      start = end + 1;
      // The first line opened a document: the rest goes to the check.
      if (this.mode === 'probe') return start < bytes.length ? this.writeProbe(bytes.subarray(start)) : undefined;
    }
    this.append(bytes.subarray(start));
    return undefined;
  }

  private append(piece: Buffer): void {
    if (piece.length === 0 || this.bad) return;
    if (this.stream) {
      this.feedLine(piece);
      return;
    }
    this.pending.push(piece);
    this.pendingBytes += piece.length;
    if (this.pendingBytes > this.options.maxLineBytes) {
      this.bad = 'too_large';
      this.pending = [];
      this.pendingBytes = 0;
    } else if (this.pendingBytes > PARSE_AT_ONCE) {
      this.stream = new JsonRecordStream(this.streamOptions(false, (record) => this.record(record)));
      const pieces = this.pending;
      this.pending = [];
      this.pendingBytes = 0;
      for (const each of pieces) if (!this.bad) this.feedLine(each);
    }
  }

  private feedLine(piece: Buffer): void {
    try {
      this.stream!.write(piece);
    } catch (error) {
      if (!(error instanceof JsonSyntaxError || error instanceof JsonRecordTooLarge)) throw error;
      this.stream = undefined;
      this.bad = error instanceof JsonRecordTooLarge ? 'too_large' : 'invalid';
    }
  }

  /** The current line ended; `last`: the body ended without a newline after it. */
  private endLine(last: boolean): void {
    const failed = (reason: 'too_large' | 'invalid') => {
      this.lines++;
      if (last && reason === 'invalid') this.truncatedTail = true;
      else this.skipped++;
    };
    if (this.bad) {
      failed(this.bad);
      this.bad = undefined;
      return;
    }
    if (this.stream) {
      const stream = this.stream;
      this.stream = undefined;
      try {
        if (stream.end()) this.lines++;
      } catch (error) {
        if (!(error instanceof JsonSyntaxError || error instanceof JsonRecordTooLarge)) throw error;
        failed(error instanceof JsonRecordTooLarge ? 'too_large' : 'invalid');
      }
      return;
    }
    const buffer = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const text = buffer.toString('utf8').trim();
    if (text === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // A first line that opens an object or array but does not close it: perhaps one
      // pretty-printed document.
      if (this.lines === 0 && !last && (text[0] === '{' || text[0] === '[')) {
        this.lines++;
        this.startProbe(buffer);
      } else {
        failed('invalid');
      }
      return;
    }
    this.lines++;
    this.value(value);
  }

  private startProbe(first: Buffer): void {
    const probe = new JsonRecordStream(this.streamOptions(true, () => undefined));
    try {
      probe.write(first);
      probe.write(NEWLINE_BYTES);
    } catch (error) {
      if (error instanceof JsonRecordTooLarge) throw tooLarge(error);
      if (!(error instanceof JsonSyntaxError)) throw error;
      this.skipped++;
      return;
    }
    this.mode = 'probe';
    this.first = first;
    this.probe = probe;
  }

  private writeProbe(bytes: Buffer): Buffer[] | undefined {
    this.kept.push(bytes);
    this.keptBytes += bytes.length;
    try {
      this.probe!.write(bytes);
    } catch (error) {
      if (error instanceof JsonRecordTooLarge) throw tooLarge(error);
      if (error instanceof JsonSyntaxError) return this.notADocument();
      throw error;
    }
    return this.keptBytes >= DOCUMENT_PROOF ? this.isADocument() : undefined;
  }

  /** JSON lines whose first line is damaged: what followed it is read again, as lines. */
  private notADocument(): Buffer[] {
    const again = this.kept;
    this.mode = 'lines';
    this.skipped++;
    this.first = undefined;
    this.probe = undefined;
    this.kept = [];
    this.keptBytes = 0;
    return again;
  }

  /** One document: read again from its start, handing out its records. */
  private isADocument(): Buffer[] {
    const again = [this.first!, NEWLINE_BYTES, ...this.kept];
    this.mode = 'document';
    this.document = true;
    this.doc = new JsonRecordStream(this.streamOptions(true, (record) => this.record(record)));
    this.first = undefined;
    this.probe = undefined;
    this.kept = [];
    this.keptBytes = 0;
    return again;
  }

  private writeDocument(bytes: Buffer): void {
    try {
      this.doc!.write(bytes);
    } catch (error) {
      if (error instanceof JsonRecordTooLarge) throw tooLarge(error);
      if (!(error instanceof JsonSyntaxError)) throw error;
      // Broken off: the records before the break are used, the rest is not read.
      this.skipped++;
      this.doc = undefined;
      this.mode = 'done';
    }
  }
}

function tooLarge(error: JsonRecordTooLarge): EngramError {
  return new EngramError('body_too_large', `${error.message}, over the limit for one record: upload the transcript as JSON lines`);
}
