/**
 * Pure rules of the request log (DESIGN section 12, `ports/requests.ts`): request ids, the
 * page cursor both engines use, and how an injected reflection's signal is named.
 */
/** A new request id: `req_` and 16 random bytes, base64url (letters, digits, `-`, `_`). */
export function newRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `req_${btoa(String.fromCharCode(...bytes)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

const CURSOR = /^c([1-9][0-9]{0,15})$/;

/**
 * The cursor of a page that ended at append sequence `seq` (a SQLite row's, a stream
 * message's): the next page starts below it. Opaque to callers; its form may change.
 */
export function cursorOf(seq: number): string {
  return `c${seq}`;
}

/** The sequence a cursor names; undefined for anything `cursorOf` did not make. */
export function cursorSeq(cursor: string): number | undefined {
  const match = CURSOR.exec(cursor);
  const seq = match ? Number(match[1]) : Number.NaN;
  return Number.isSafeInteger(seq) ? seq : undefined;
}

/**
 * Where a page of the log starts: below the append sequence `below` (the newest entry
 * when no cursor is given). Or what is wrong with the request, for the store to refuse:
 * the limit must be a positive integer, the cursor one `cursorOf` made.
 */
export function pageStart({ limit, cursor }: { limit: number; cursor?: string }): { below: number } | { param: 'limit' | 'cursor'; problem: string } {
  if (!Number.isSafeInteger(limit) || limit < 1) return { param: 'limit', problem: '`limit` must be a positive integer' };
  const below = cursor === undefined ? Number.MAX_SAFE_INTEGER : cursorSeq(cursor);
  return below === undefined ? { param: 'cursor', problem: '`cursor` is not one a page of this list gave' } : { below };
}
