import type { Readable } from 'node:stream';
import { Observable } from 'rxjs';

/**
 * A Node readable as an Observable of its chunks. Unsubscribing destroys the stream
 * (which aborts the upstream request behind it).
 */
export function fromReadable(readable: Readable): Observable<Buffer> {
  return new Observable<Buffer>((subscriber) => {
    const onData = (chunk: Buffer) => subscriber.next(chunk);
    const onEnd = () => subscriber.complete();
    const onError = (error: Error) => subscriber.error(error);
    // `close` without `end` means the stream was torn down (socket reset).
    const onClose = () => {
      if (!readable.readableEnded) subscriber.error(Object.assign(new Error('upstream body closed before its end'), { code: 'UND_ERR_SOCKET' }));
    };
    readable.on('data', onData);
    readable.once('end', onEnd);
    readable.once('error', onError);
    readable.once('close', onClose);
    return () => {
      readable.off('data', onData);
      readable.off('end', onEnd);
      readable.off('error', onError);
      readable.off('close', onClose);
      if (!readable.readableEnded) {
        // Destroying emits the abort as an 'error'; nobody is listening any more.
        readable.on('error', () => undefined);
        readable.destroy();
      }
    };
  });
}
