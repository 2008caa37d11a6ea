/**
 * The logger adapters report to: pino-compatible (structured fields first), as Fastify's
 * is. Adapters are opened before the app and its logger exist, so they get a
 * `DeferredLog` that writes to stderr until the app's logger is attached.
 */
export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export class DeferredLog implements Log {
  #target: Log | undefined;

  attach(target: Log): void {
    this.#target = target;
  }

  info(fields: object, message: string): void {
    if (this.#target) this.#target.info(fields, message);
  }

  warn(fields: object, message: string): void {
    if (this.#target) this.#target.warn(fields, message);
    else process.stderr.write(`engram: ${message} ${JSON.stringify(fields)}\n`);
  }

  error(fields: object, message: string): void {
    if (this.#target) this.#target.error(fields, message);
    else process.stderr.write(`engram: ${message} ${describe(fields)}\n`);
  }
}

function describe(fields: object): string {
  const { err, ...rest } = fields as { err?: unknown };
  // Whatever was thrown: an Error, or an object carrying a message (never `[object Object]`).
  const message = err instanceof Error ? err.message : (err as { message?: unknown } | undefined)?.message;
  const error = typeof message === 'string' ? ` (${message})` : err === undefined ? '' : ` (${JSON.stringify(err) ?? String(err)})`;
  return JSON.stringify(rest) + error;
}
