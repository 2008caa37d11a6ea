/**
 * Engram's archive: a versioned JSON Lines file of everything a deployment cannot
 * rebuild (organisations, agents with their sealed upstream keys, token hashes,
 * reflections with their vectors, the dashboard's users with their memberships, and the
 * OAuth clients registered with the global MCP server), so a user moves between engines
 * (the embedded store to NATS + Weaviate) or keeps a copy, without losing anything or
 * anyone. Secrets stay as they are stored: sealed keys need the same secret key to be used
 * after an import, tokens are hashes, and a user's password hash (scrypt, never the
 * password) is sealed with that key too, so the archive alone gives nothing to guess
 * passwords against. OAuth clients are public (PKCE, no client secret): their registration
 * is all there is.
 *
 * Not in it, because each is short-lived or obtained again by one sign-in: conversation
 * state and recorded responses (they expire, a client starts them afresh), dashboard
 * sessions (a week at most; people log in again), OAuth grants with their refresh tokens
 * and the key that signs access tokens (bound to the deployment's issuer URL and key;
 * access tokens live 15 minutes, refresh tokens rotate on every use so a copy would be
 * stale, and a client whose token fails asks for consent again, under the registration
 * the archive keeps).
 *
 * Line 1 is the header; then one record a line, orgs before their agents, agents before
 * their tokens and reflections, then users (whose memberships name the orgs above) and
 * OAuth clients, so an import can write each line as it reads it.
 */
import type { OAuthClient, User } from '../domain/account-records.js';
import type { Agent, Org, Reflection, TokenRecord } from '../domain/types.js';

export const ARCHIVE_FORMAT = 'engram-archive';
/**
 * 2: reflections carry `supersededBy`, `supersededAt` and `tagsBy`. A release that reads
 * only version 1 refuses it rather than import superseded reflections as current ones.
 * Version 1 archives still import (their reflections' `tagsBy` is presumed, as SQLite
 * migration 12 does).
 *
 * 3: `user` and `oauth_client` records. A release that reads only version 2 refuses the
 * archive at its header, saying to upgrade, rather than deep in its checking pass at the
 * first record type it does not know. Version 1 and 2 archives still import: they carry
 * no one, and the target keeps the people it has.
 *
 * 4: reflections carry `scope` and `user` (DESIGN section 13). A release that reads only
 * version 3 refuses it rather than import one end user's reflections as the agent's
 * shared ones. Older archives still import: their reflections hold everywhere and are
 * the agent's own, as they were.
 */
export const ARCHIVE_VERSION = 4;

export interface ArchiveHeader {
  format: typeof ARCHIVE_FORMAT;
  version: number;
  created_at: string;
  engram: string;
  /** Which engines the archive was read from, for the record. */
  source: { control: string; reflections: string };
}

export type ArchiveRecord =
  | { type: 'org'; org: Org }
  | { type: 'agent'; agent: Agent; sealed_secrets: string }
  | { type: 'token'; token: TokenRecord; hash: string }
  /** The vector as base64 of little-endian float32s. */
  | { type: 'reflection'; reflection: Reflection; vector: string }
  | { type: 'index'; agent_id: string; markdown: string }
  /** `sealed_password`: the user's `passwordHash` as stored, sealed with the key (`passwordContext`). */
  | { type: 'user'; user: ArchivedUser; sealed_password: string }
  | { type: 'oauth_client'; client: OAuthClient };

/** A user as archived: everything but the password hash, which travels sealed beside it. */
export type ArchivedUser = Omit<User, 'passwordHash'>;

/** What a user's sealed password hash is bound to: it opens for that user only. */
export function passwordContext(userId: string): string {
  return `archive-password:${userId}`;
}

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) throw new Error('a vector is not a whole number of float32s');
  // Copied: a Buffer's offset need not be 4-aligned.
  const vector = new Float32Array(bytes.length / 4);
  for (let i = 0; i < vector.length; i++) vector[i] = bytes.readFloatLE(i * 4);
  return vector;
}
