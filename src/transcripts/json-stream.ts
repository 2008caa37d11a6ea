/**
 * One JSON text read as its bytes arrive, handing out its records as each is complete:
 * for what is too large to give `JSON.parse` in one go (a long line, a whole document),
 * since one `JSON.parse` of megabytes holds the event loop for as long as it runs, and
 * a document of millions of small values costs gigabytes once parsed whole.
 *
 * The elements of a root array are records, and so, with `events`, are those of a root
 * object's `events` array (`{ "events": [...] }`); any other root value is one record,
 * handed out at `end()`. Nothing but the record being read (and the root object around
 * an `events` array) is held, and that is bounded: a record over `maxRecordBytes` or
 * `maxRecordTokens`, or any single token over `maxRecordBytes`, ends the stream with
 * `JsonRecordTooLarge`.
 *
 * Lexing and building values is `@streamparser/json`'s (a tokenizer, and a token parser
 * per record): maintained, dependency-free, and fed bytes of any split. What is ours is
 * the little grammar of the records container (values separated by commas) and the
 * bookkeeping of sizes. Unlike `JSON.parse` of decoded text, a string that is not valid
 * UTF-8 is an error here.
 */
import { TokenParser, TokenParserError, Tokenizer, TokenizerError, TokenType, type ParsedTokenInfo } from '@streamparser/json';

export interface JsonStreamOptions {
  /** A root object's `events` array holds the records (a transcript document); else such an object is one record. */
  events: boolean;
  /** Largest record, and largest single token, in bytes. */
  maxRecordBytes: number;
  /** Most tokens in one record (and in a root object around `events`): what bounds the values built for it. */
  maxRecordTokens: number;
  onRecord(record: unknown): void;
}

/** The bytes are not one JSON text (or not only one). */
export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError';
}

/** A record (or one token) went over a limit: the stream cannot go on. */
export class JsonRecordTooLarge extends Error {
  override name = 'JsonRecordTooLarge';
}

type ContainerState = 'open' | 'value' | 'comma';

/** Where the records are: the root array, or the `events` array of the root object. */
interface Container {
  state: ContainerState;
  root: boolean;
}

export class JsonRecordStream {
  private readonly tokenizer = new Tokenizer({ stringBufferSize: 64 * 1024 });
  /** Builds the records one after another (consecutive values, no separators between them). */
  private records: TokenParser | undefined;
  /** Builds a root that is not an array: one record, or the object around `events`. */
  private root: TokenParser | undefined;
  private rootValue: unknown;
  private rootDone = false;
  private container: Container | undefined;
  /** Offset of the record being read, or -1 between records. */
  private recordStart = -1;
  private recordTokens = 0;
  private rootTokens = 0;
  /** The root is itself a record (not a container of records yet): its size is a record's. */
  private rootIsRecord = false;
  private depth = 0;
  private expectKey = false;
  private afterColon = false;
  private key: string | undefined;
  private lastToken = 0;
  private written = 0;
  private tokens = 0;

  constructor(private readonly options: JsonStreamOptions) {
    this.tokenizer.onToken = (info) => this.token(info);
    // The library's own errors are syntax errors; anything else (thrown by `onRecord`) goes through as it is.
    this.tokenizer.onError = (error) => {
      throw error instanceof TokenizerError || error instanceof TokenParserError ? new JsonSyntaxError(error.message) : error;
    };
  }

  /** Throws `JsonSyntaxError` or `JsonRecordTooLarge`; the stream is unusable after either. */
  write(bytes: Uint8Array): void {
    this.tokenizer.write(bytes);
    this.written += bytes.length;
    const limit = this.options.maxRecordBytes;
    // A value still being read (a long string, a record still open) counts as it grows.
    if (this.written - this.lastToken > limit) throw this.tooLarge(`a value of more than ${limit} bytes`);
    if (this.recordStart >= 0 && this.written - this.recordStart > limit) throw this.tooLarge(`a record of more than ${limit} bytes`);
    if (this.rootIsRecord && this.written > limit) throw this.tooLarge(`a record of more than ${limit} bytes`);
  }

  /** The bytes ended: `false` when they held only whitespace. Throws `JsonSyntaxError` when the value is incomplete. */
  end(): boolean {
    this.tokenizer.end();
    if (this.tokens === 0) return false;
    if (!this.rootDone) throw new JsonSyntaxError('The JSON ends before its value does');
    const value = this.rootValue as { events?: unknown } | undefined;
    if (this.root && !(this.options.events && Array.isArray(value?.events))) this.options.onRecord(value);
    return true;
  }

  private token(info: ParsedTokenInfo): void {
    this.tokens++;
    this.lastToken = info.offset;
    if (this.rootDone) throw new JsonSyntaxError(`More JSON after the value, at byte ${info.offset}`);
    if (this.recordStart >= 0) {
      this.recordToken(info);
      return;
    }
    if (this.container) {
      this.containerToken(info, this.container);
      return;
    }
    if (!this.root) {
      if (info.token === TokenType.LEFT_BRACKET) {
        this.container = { state: 'open', root: true };
        return;
      }
      this.root = new TokenParser({ paths: ['$'] });
      this.root.onValue = ({ value }) => {
        this.rootValue = value;
        this.rootDone = true;
      };
      this.rootIsRecord = true;
    }
    if (++this.rootTokens > this.options.maxRecordTokens) throw this.tooLarge(`more than ${this.options.maxRecordTokens} tokens`);
    const { token } = info;
    const valueOfKey = this.afterColon;
    this.afterColon = false;
    if (this.depth === 1) {
      if (token === TokenType.STRING && this.expectKey) {
        this.key = info.value as string;
        this.expectKey = false;
      } else if (token === TokenType.COMMA) {
        this.expectKey = true;
      } else if (token === TokenType.COLON) {
        this.afterColon = true;
      } else if (token === TokenType.LEFT_BRACKET && valueOfKey && this.key === 'events' && this.options.events) {
        // The root object's records: the root's own value gets an empty array in their place.
        this.root.write(info);
        this.depth++;
        this.rootIsRecord = false;
        this.container = { state: 'open', root: false };
        return;
      }
    }
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      if (this.depth === 0) this.expectKey = token === TokenType.LEFT_BRACE;
      this.depth++;
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      this.depth--;
    }
    this.root.write(info);
  }

  /** A token between records: the container's grammar is `[ value (, value)* ]`. */
  private containerToken(info: ParsedTokenInfo, container: Container): void {
    const { token } = info;
    if (token === TokenType.RIGHT_BRACKET && container.state !== 'comma') {
      this.container = undefined;
      if (container.root) {
        this.rootDone = true;
      } else {
        this.depth--;
        this.root!.write(info);
      }
      return;
    }
    if (token === TokenType.COMMA && container.state === 'value') {
      container.state = 'comma';
      return;
    }
    const opens = token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET;
    const primitive = token === TokenType.STRING || token === TokenType.NUMBER || token === TokenType.TRUE || token === TokenType.FALSE || token === TokenType.NULL;
    if (container.state === 'value' || !(opens || primitive)) {
      throw new JsonSyntaxError(`Unexpected ${TokenType[token]} at byte ${info.offset}`);
    }
    this.recordStart = info.offset;
    this.recordTokens = 0;
    this.recordToken(info);
  }

  private recordToken(info: ParsedTokenInfo): void {
    if (++this.recordTokens > this.options.maxRecordTokens) throw this.tooLarge(`a record of more than ${this.options.maxRecordTokens} tokens`);
    if (info.offset - this.recordStart > this.options.maxRecordBytes) throw this.tooLarge(`a record of more than ${this.options.maxRecordBytes} bytes`);
    if (!this.records) {
      this.records = new TokenParser({ paths: ['$'], separator: '' });
      this.records.onValue = ({ value }) => {
        this.recordStart = -1;
        this.container!.state = 'value';
        this.options.onRecord(value);
      };
    }
    this.records.write(info);
  }

  private tooLarge(what: string): JsonRecordTooLarge {
    return new JsonRecordTooLarge(`The JSON holds ${what}`);
  }
}
