import type { ServerResponse } from 'node:http';
import type { ResponseSink } from '../conversation/exchange.js';

/** The client side of the tee over a plain HTTP response. */
export function httpSink(response: ServerResponse): ResponseSink {
  return {
    get headersSent() {
      return response.headersSent;
    },
    writeHead(status, headers) {
      response.writeHead(status, headers);
      // Streams must reach the client at once, before the first body chunk.
      response.flushHeaders();
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
