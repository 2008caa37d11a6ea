/**
 * Where a Server-Sent Events byte stream stands: between two events, or inside one. The
 * relay passes the upstream's bytes on as they come, so a stream it ends itself (the time
 * limit) could stop mid-event, and the error event written after would be read as the
 * rest of that event. It ends at an event's end instead: this tells whether the bytes
 * sent so far end one, and where the next end lies in a chunk. Only the last four bytes
 * sent are kept; a chunk is scanned only while an end is being looked for.
 *
 * An event ends with an empty line; a line ends with CRLF, LF or CR (the SSE spec).
 */
const LF = 0x0a;
const CR = 0x0d;

export class EventBoundary {
  /** The last bytes seen (at most four); the start of a stream is between events. */
  #tail: Uint8Array = Uint8Array.of(LF, LF);

  /** Takes note of bytes sent on. */
  see(chunk: Uint8Array): void {
    if (chunk.length >= 4) {
      this.#tail = chunk.slice(chunk.length - 4);
      return;
    }
    const joined = new Uint8Array(this.#tail.length + chunk.length);
    joined.set(this.#tail);
    joined.set(chunk, this.#tail.length);
    this.#tail = joined.slice(Math.max(0, joined.length - 4));
  }

  /** The bytes seen so far end an event (or nothing was seen). */
  atEventEnd(): boolean {
    return this.#endsEvent(Uint8Array.of(), 0);
  }

  /**
   * How many leading bytes of `chunk` (following those seen) complete the event under
   * way, or -1 when it does not end in `chunk`. Nothing is noted: call `see` for what is sent.
   */
  eventEnd(chunk: Uint8Array): number {
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if ((byte === LF || byte === CR) && this.#endsEvent(chunk, i + 1)) {
        // A CR's LF, when it follows at once, goes with it.
        return byte === CR && chunk[i + 1] === LF ? i + 2 : i + 1;
      }
    }
    return -1;
  }

  /** Whether the bytes seen, then `chunk`'s first `end`, finish with an empty line. */
  #endsEvent(chunk: Uint8Array, end: number): boolean {
    const at = (k: number): number | undefined => (k >= 0 ? chunk[k] : this.#tail[this.#tail.length + k]);
    let j = end;
    const last = at(j - 1);
    if (last === LF) {
      j -= 1;
      if (at(j - 1) === CR) j -= 1;
    } else if (last === CR) {
      j -= 1;
    } else {
      return false;
    }
    const before = at(j - 1);
    return before === LF || before === CR;
  }
}
