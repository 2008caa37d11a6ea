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
import type { AnswerDecoder, ErrorRenderer } from '../protocols/types.js';
import { EventBoundary } from './event-boundary.js';
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
      /**
       * The assembler failed (a fault of Engram's own): the client had the whole answer, the
       * turn is not learnt from. Never reported to the client, whose stream was whole.
       */
      assemblyError?: unknown;
    }
  | { outcome: 'failed'; error: EngramError }
  | { outcome: 'aborted' };

export interface RelayInput {
  body: Readable;
  sink: ClientSink;
  adapter: AnswerDecoder & ErrorRenderer;
  /** The upstream answered with `text/event-stream`. */
  sse: boolean;
  signal: AbortSignal;
  /** The upstream client's reading of a body error (`UpstreamClient.failure`). */
  failure: (error: unknown) => unknown;
  /** The most the extraction side holds of one SSE event, or of a JSON answer, in bytes. Default: no limit. */
  maxEventBytes?: number;
  /** The most of the answer's text the assembler keeps, in bytes (`AnswerBudget`). Default: no limit. */
  maxAnswerBytes?: number;
  /**
   * The longest the body may stream, in ms: past it the upstream is cut and the client
   * gets the protocol's `stream_time_limit` error event. Default: no limit.
   */
  maxStreamMs?: number;
}

/**
 * Past the time limit, how long the event under way may take to end before the stream is
 * cut without the error event (which, mid-event, would be read as part of that event).
 */
const EVENT_END_GRACE_MS = 2_000;

/** What the extraction side makes of an answer it could not read or hold. */
const unusable = (): AssembledAnswer => ({ final: false, stopReason: null, errored: true, turns: [] });

/** The extraction side: the answer assembled, or the size of what was too large to be, or why it failed. */
type Assembly = { answer: AssembledAnswer; unassembled?: number; assemblyError?: unknown };

interface AssemblyLimits {
  maxEventBytes: number;
  maxAnswerBytes: number;
}

function assembleSse(adapter: AnswerDecoder, { maxEventBytes, maxAnswerBytes }: AssemblyLimits): (source: Observable<Buffer>) => Observable<Assembly> {
  return (source) =>
    defer(() => {
      const assembler = adapter.createAssembler({ maxBytes: maxAnswerBytes });
      let unassembled: number | undefined;
      let failed: { error: unknown } | undefined;
      const parser = new SseParser(
        (event) => {
          // Past an event it could not hold, the assembler stops: the answer would be incomplete.
          if (unassembled !== undefined || failed) return;
          // A throwing assembler stops the extraction side only: the client's stream is not its to end.
          try {
            assembler.push(event);
          } catch (error) {
            failed = { error };
          }
        },
        { maxEventBytes, onOversize: (bytes) => (unassembled ??= bytes) },
      );
      return source.pipe(
        reduce((_, chunk) => parser.push(chunk), undefined as void),
        map((): Assembly => {
          parser.end();
          if (failed) return { answer: unusable(), assemblyError: failed.error };
          return unassembled === undefined ? { answer: assembler.finish() } : { answer: unusable(), unassembled };
        }),
      );
    });
}

function assembleJson(adapter: AnswerDecoder, { maxEventBytes }: AssemblyLimits): (source: Observable<Buffer>) => Observable<Assembly> {
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

export async function relay(input: RelayInput): Promise<RelayOutcome> {
  const { body, sink, adapter, sse, signal, failure: classify } = input;
  const limits: AssemblyLimits = { maxEventBytes: input.maxEventBytes ?? Infinity, maxAnswerBytes: input.maxAnswerBytes ?? Infinity };
  const chunks = connectable(fromReadable(body), { connector: () => new Subject<Buffer>(), resetOnDisconnect: false });
  // Where the client's event stream stands, so a stream Engram ends is ended between events.
  const boundary = sse ? new EventBoundary() : undefined;
  /** Set once the time limit passed with an event under way: the end of that event is awaited. */
  let ending: { boundary: EventBoundary; cut: () => void } | undefined;

  let stop: (reason: unknown) => void = () => undefined;
  const delivered = new Promise<void>((resolve, reject) => {
    stop = reject;
    chunks.subscribe({
      next(chunk) {
        if (ending) {
          // Time is up: the event under way is finished, then the stream ends.
          const end = ending.boundary.eventEnd(chunk);
          if (end !== -1) {
            sink.write(chunk.subarray(0, end));
            return ending.cut();
          }
        }
        boundary?.see(chunk);
        if (!sink.write(chunk)) {
          body.pause();
          sink.onDrain(() => body.resume());
        }
      },
      error: reject,
      complete: resolve,
    });
  });
  const assembly = lastValueFrom(chunks.pipe(sse ? assembleSse(adapter, limits) : assembleJson(adapter, limits)));
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
  // An answer without end is cut at the time limit as a departed client's is (the upstream
  // body torn down), at the end of the event under way, and the client is told why in the
  // protocol's own error event. An event that does not end soon is cut without one.
  let overTime: EngramError | undefined;
  let frameless = false;
  let grace: NodeJS.Timeout | undefined;
  const cut = () => {
    clearTimeout(grace);
    ending = undefined;
    connection.unsubscribe();
    stop(overTime);
  };
  const maxStreamMs = input.maxStreamMs ?? Infinity;
  const timer = Number.isFinite(maxStreamMs)
    ? setTimeout(() => {
        overTime = new EngramError('stream_time_limit', `The answer streamed for longer than Engram allows (${maxStreamMs} ms, ENGRAM_STREAM_MAX_MS); it was cut here`);
        if (!boundary || boundary.atEventEnd()) return cut();
        ending = { boundary, cut };
        grace = setTimeout(() => {
          frameless = true;
          cut();
        }, EVENT_END_GRACE_MS);
        grace.unref();
      }, maxStreamMs)
    : undefined;
  timer?.unref();
  try {
    await delivered;
    // The sink stays open: the caller ends it once the exchange is recorded, so a client
    // that has seen the whole answer knows it is safely queued for extraction. The client
    // had every byte, so nothing the extraction side met can fail the stream now.
    const assembled = await assembly.catch((assemblyError: unknown): Assembly => ({ answer: unusable(), assemblyError }));
    return { outcome: 'completed', ...assembled };
  } catch (error) {
    if (signal.aborted) return { outcome: 'aborted' };
    const wrapped = overTime ?? streamFailure(classify(error), error);
    sink.fail(sse && !frameless ? adapter.streamErrorFrame(wrapped) : undefined);
    return { outcome: 'failed', error: wrapped };
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
    signal.removeEventListener('abort', onAbort);
  }
}

/** An upstream body's failure as the client hears it mid-stream: unreachable once it streamed is a broken stream. */
function streamFailure(failure: unknown, error: unknown): EngramError {
  const engramError = failure instanceof EngramError ? failure : new EngramError('upstream_stream_failed', undefined, { cause: error });
  return engramError.code === 'upstream_unreachable' ? new EngramError('upstream_stream_failed', undefined, { cause: error }) : engramError;
}
