/**
 * Every failure of the Weaviate reflection store reaches the caller as a
 * `WeaviateStoreError` whose message names Weaviate and the operation, so the memory layer
 * can degrade (answer without reflections) and the log says what was unreachable.
 */

export class WeaviateStoreError extends Error {
  override readonly name = 'WeaviateStoreError';
  /** The port operation that failed (`upsert`, `keywords`, `connect`, ...). */
  readonly operation: string;

  constructor(operation: string, message: string, options?: { cause?: unknown }) {
    super(`Weaviate reflection store: ${operation} failed: ${message}`, options);
    this.operation = operation;
  }
}

/**
 * Wraps a client error. `secrets` (the API key) are cut out of the message: Weaviate's
 * error text is echoed from the server and the client, and is not ours to trust.
 */
export function storeError(operation: string, error: unknown, secrets: readonly string[] = []): WeaviateStoreError {
  if (error instanceof WeaviateStoreError) return error;
  const raw = error instanceof Error ? error.message : String(error);
  const message = redact(raw, secrets);
  // A cause that carried a secret is dropped too: Node prints causes with the error.
  return new WeaviateStoreError(operation, message, message === raw ? { cause: error } : undefined);
}

export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}
