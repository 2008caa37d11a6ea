/**
 * The tee of DESIGN section 2: the upstream body goes to the client byte for byte and
 * unbuffered, and, on a second branch, is decoded into the answer extraction needs.
 * Both sinks subscribe before `connect()`, so neither misses the first chunk; only the
 * extraction side holds data (STYLE habit 7).
 */
import type { Readable } from 'node:stream';
import { connectable, defer, lastValueFrom, map, reduce, Subject, type Observable } from 'rxjs';
import type { AssembledAnswer } from '../domain/transcript.js';
import { EngramError } from '../errors.js';
import { SseParser } from '../protocols/sse.js';
import type { ProtocolAdapter } from '../protocols/types.js';
import { fromReadable } from './from-readable.js';

/** Where the client's bytes go (an HTTP response today, other transports later). */
export interface ClientSink {
  /** Writes bytes; false when the client is not keeping up. */
  write(chunk: Uint8Array): boolean;
  /** Calls `resume` once the client has drained what was written. */
  onDrain(resume: () => void): void;
  /** Completes the response; the relay leaves this to its caller. */
  end(): void;
  /** After a mid-stream failure: send `frame` (the protocol's error event) and end, or cut the connection when there is none. */
  fail(frame: string | undefined): void;
}

export type RelayOutcome =
  | {
      outcome: 'completed';
      answer: AssembledAnswer;
      /**
       * The answer held an SSE event (or was a JSON body) larger than `maxEventBytes`, of
       * this many bytes: the client had it all, but it was not assembled, so `answer` is an
       * errored one and the turn is not learnt from.
       */
      unassembled?: number;
    }
  | { outcome: 'failed'; error: EngramError }
  | { outcome: 'aborted' };

export interface RelayInput {
  body: Readable;
  sink: ClientSink;
  adapter: ProtocolAdapter;
  /** The upstream answered with `text/event-stream`. */
  sse: boolean;
  signal: AbortSignal;
  /** The upstream client's reading of a body error (`UpstreamClient.failure`). */
  failure: (error: unknown) => unknown;
  /** The most the extraction side holds of one SSE event, or of a JSON answer, in bytes. Default: no limit. */
  maxEventBytes?: number;
}

/** What the extraction side makes of an answer it could not read or hold. */
const unusable = (): AssembledAnswer => ({ final: false, stopReason: null, errored: true, turns: [] });

/** The extraction side: the answer assembled, or the size of what was too large to be. */
type Assembly = { answer: AssembledAnswer; unassembled?: number };

function assembleSse(adapter: ProtocolAdapter, maxEventBytes: number): (source: Observable<Buffer>) => Observable<Assembly> {
  return (source) =>
    defer(() => {
      const assembler = adapter.createAssembler();
      let unassembled: number | undefined;
      const parser = new SseParser(
        (event) => {
          // Past an event it could not hold, the assembler stops: the answer would be incomplete.
          if (unassembled === undefined) assembler.push(event);
        },
        { maxEventBytes, onOversize: (bytes) => (unassembled ??= bytes) },
      );
      return source.pipe(
        reduce((_, chunk) => parser.push(chunk), undefined as void),
        map((): Assembly => {
          parser.end();
          return unassembled === undefined ? { answer: assembler.finish() } : { answer: unusable(), unassembled };
        }),
      );
    });
}

function assembleJson(adapter: ProtocolAdapter, maxEventBytes: number): (source: Observable<Buffer>) => Observable<Assembly> {
  return (source) =>
    defer(() => {
      let chunks: Buffer[] = [];
      let size = 0;
      return source.pipe(
        reduce((_, chunk) => {
          size += chunk.length;
          // Past the limit nothing more is kept: the body is only counted.
          if (size > maxEventBytes) chunks = [];
          else chunks.push(chunk);
        }, undefined as void),
        map((): Assembly => {
          if (size > maxEventBytes) return { answer: unusable(), unassembled: size };
          try {
            return { answer: adapter.assembleJson(JSON.parse(Buffer.concat(chunks).toString('utf8'))) };
          } catch {
            return { answer: unusable() };
          }
        }),
      );
    });
}

export async function relay({ body, sink, adapter, sse, signal, failure: classify, maxEventBytes = Infinity }: RelayInput): Promise<RelayOutcome> {
  const chunks = connectable(fromReadable(body), { connector: () => new Subject<Buffer>(), resetOnDisconnect: false });

  let stop: (reason: unknown) => void = () => undefined;
  const delivered = new Promise<void>((resolve, reject) => {
    stop = reject;
    chunks.subscribe({
      next(chunk) {
        if (!sink.write(chunk)) {
          body.pause();
          sink.onDrain(() => body.resume());
        }
      },
      error: reject,
      complete: resolve,
    });
  });
  const assembly = lastValueFrom(chunks.pipe(sse ? assembleSse(adapter, maxEventBytes) : assembleJson(adapter, maxEventBytes)));
  // `delivered` rejects on the same error as `assembly`; it is reported once, below.
  assembly.catch(() => undefined);

  const connection = chunks.connect();
  // Disconnecting tears the upstream body down; nothing more reaches the subscribers.
  const onAbort = () => {
    connection.unsubscribe();
    stop(signal.reason);
  };
  if (signal.aborted) onAbort();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await delivered;
    // The sink stays open: the caller ends it once the exchange is recorded, so a client
    // that has seen the whole answer knows it is safely queued for extraction.
    return { outcome: 'completed', ...(await assembly) };
  } catch (error) {
    if (signal.aborted) return { outcome: 'aborted' };
    const failure = classify(error);
    const engramError = failure instanceof EngramError ? failure : new EngramError('upstream_stream_failed', undefined, { cause: error });
    const wrapped = engramError.code === 'upstream_unreachable'
      ? new EngramError('upstream_stream_failed', undefined, { cause: error })
      : engramError;
    sink.fail(sse ? adapter.streamErrorFrame(wrapped) : undefined);
    return { outcome: 'failed', error: wrapped };
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
