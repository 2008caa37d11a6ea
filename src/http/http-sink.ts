import type { ServerResponse } from 'node:http';
import type { ResponseSink } from '../conversation/exchange.js';

/** The client side of the tee over a plain HTTP response. */
export function httpSink(response: ServerResponse): ResponseSink {
  return {
    get headersSent() {
      return response.headersSent;
    },
    writeHead(status, headers, flush = false) {
      response.writeHead(status, headers);
      // A stream's headers go out at once; a JSON body's go out with it, in one write.
      if (flush) response.flushHeaders();
    },
    write: (chunk) => response.write(chunk),
    onDrain: (resume) => void response.once('drain', resume),
    end: () => void response.end(),
    fail(frame) {
      if (frame !== undefined && !response.destroyed && response.writable) response.end(frame);
      else response.destroy();
    },
  };
}
