/**
 * Engram's archive: a versioned JSON Lines file of everything a deployment cannot
 * rebuild (organisations, agents with their sealed upstream keys, token hashes,
 * reflections with their vectors), so a user moves between engines (the embedded
 * store to NATS + Weaviate) or keeps a copy, without losing anything. Secrets stay as
 * they are stored: sealed keys need the same secret key to be used after an import,
 * tokens are hashes. Conversation state and recorded responses are not in it: they
 * expire on their own and a client starts them afresh.
 *
 * Line 1 is the header; then one record a line, orgs before their agents, agents before
 * their tokens and reflections, so an import can write each line as it reads it.
 */
import type { Agent, Org, Reflection, TokenRecord } from '../domain/types.js';

export const ARCHIVE_FORMAT = 'engram-archive';
/**
 * 2: reflections carry `supersededBy`, `supersededAt` and `tagsBy`. A release that reads
 * only version 1 refuses it rather than import superseded reflections as current ones.
 * Version 1 archives still import (their reflections' `tagsBy` is presumed, as SQLite
 * migration 12 does).
 */
export const ARCHIVE_VERSION = 2;

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
  | { type: 'index'; agent_id: string; markdown: string };

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
