import type { ServerResponse } from 'node:http';
import type { ResponseSink } from '../conversation/exchange.js';

/**
 * A JSON answer up to this size is held until the exchange ends and written with its
 * end in one write (headers, body, terminator), rather than as it arrives and then a
 * terminator after settling: the client cannot have the answer before its turn is
 * recorded either way (no content-length is passed on), and one write costs a third of
 * three. A longer answer is passed on as it comes.
 */
const HOLD_BYTES = 256 * 1024;

/** The client side of the tee over a plain HTTP response. */
export function httpSink(response: ServerResponse): ResponseSink {
  /** Chunks of a JSON answer waiting for the end; undefined once streaming (or for SSE). */
  let held: Uint8Array[] | undefined;
  let heldBytes = 0;
  /** The status line and headers are decided, though perhaps not sent yet. */
  let committed = false;
  const release = () => {
    const chunks = held ?? [];
    held = undefined;
    for (const chunk of chunks) response.write(chunk);
  };
  return {
    get headersSent() {
      return committed || response.headersSent;
    },
    writeHead(status, headers, flush = false) {
      committed = true;
      response.writeHead(status, headers);
      // A stream's headers go out at once; a JSON body's go out with it, in one write.
      if (flush) response.flushHeaders();
      else held = [];
    },
    write(chunk) {
      if (held) {
        if (heldBytes + chunk.byteLength <= HOLD_BYTES) {
          held.push(chunk);
          heldBytes += chunk.byteLength;
          return true;
        }
        release();
      }
      return response.write(chunk);
    },
    onDrain: (resume) => void response.once('drain', resume),
    end() {
      if (held && held.length > 0) {
        const chunks = held;
        held = undefined;
        response.end(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
      } else {
        held = undefined;
        response.end();
      }
    },
    fail(frame) {
      // What arrived before the failure goes first, as it would have unheld.
      if (held) release();
      if (frame !== undefined && !response.destroyed && response.writable) response.end(frame);
      else response.destroy();
    },
  };
}
