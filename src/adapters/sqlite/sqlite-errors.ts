import { EngramError } from '../../errors.js';

export function isSqliteError(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** A uniqueness violation as the port's `conflict`; anything else unchanged. */
export function conflictOr(error: unknown, message: string): unknown {
  return isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')
    ? new EngramError('conflict', message, { cause: error })
    : error;
}
