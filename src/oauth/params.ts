/**
 * Reading OAuth request parameters (query or form): each at most once (RFC 6749 §3.1;
 * a repeated one is a parsed array, and refused), an empty one as if absent.
 */
import { OAuthError } from './oauth-error.js';

export type Params = Record<string, unknown>;

const MAX_PARAM_CHARS = 4096;

/** The parameter, or undefined when absent or empty; refused when repeated or oversized. */
export function optional(params: Params, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new OAuthError('invalid_request', `${name} was sent more than once`);
  if (value.length > MAX_PARAM_CHARS) throw new OAuthError('invalid_request', `${name} is longer than ${MAX_PARAM_CHARS} characters`);
  return value;
}

/** The parameter; `invalid_request` when absent. */
export function required(params: Params, name: string): string {
  const value = optional(params, name);
  if (value === undefined) throw new OAuthError('invalid_request', `${name} is required`);
  return value;
}
