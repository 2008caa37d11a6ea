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
  | { outcome: 'completed'; answer: AssembledAnswer }
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
}

function assembleSse(adapter: ProtocolAdapter): (source: Observable<Buffer>) => Observable<AssembledAnswer> {
  return (source) =>
    defer(() => {
      const assembler = adapter.createAssembler();
      const parser = new SseParser((event) => assembler.push(event));
      return source.pipe(
        reduce((_, chunk) => parser.push(chunk), undefined as void),
        map(() => {
          parser.end();
          return assembler.finish();
        }),
      );
    });
}

function assembleJson(adapter: ProtocolAdapter): (source: Observable<Buffer>) => Observable<AssembledAnswer> {
  return (source) =>
    source.pipe(
      reduce((chunks, chunk) => (chunks.push(chunk), chunks), [] as Buffer[]),
      map((chunks) => {
        try {
          return adapter.assembleJson(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          return { final: false, stopReason: null, errored: true, turns: [] };
        }
      }),
    );
}

export async function relay({ body, sink, adapter, sse, signal, failure: classify }: RelayInput): Promise<RelayOutcome> {
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
  const answer = lastValueFrom(chunks.pipe(sse ? assembleSse(adapter) : assembleJson(adapter)));
  // `delivered` rejects on the same error as `answer`; it is reported once, below.
  answer.catch(() => undefined);

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
    return { outcome: 'completed', answer: await answer };
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
