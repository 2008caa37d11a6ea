/**
 * Bucket names and keys of the NATS control stores.
 *
 * A NATS KV key may hold only `[-/_=.a-zA-Z0-9]`, and a dot separates subject tokens
 * (filters such as `conv.<agent>.>` rely on that), while names, conversation ids and
 * session digests can be any text of any length. Every such part goes through `keyPart`,
 * which is injective:
 *
 * | value                                  | key part                          |
 * |----------------------------------------|-----------------------------------|
 * | 1-128 chars of `[A-Za-z0-9_-]` (ids)   | the value itself                  |
 * | anything else, encoding <= 200 chars   | `=` + base64url(utf-8)            |
 * | anything else, longer                  | `==` + base64url(sha-256(utf-8))  |
 *
 * The plain form never contains `=`, and base64url never does either, so the three
 * forms cannot meet. The digest form is injective only up to SHA-256 collisions: every
 * value stored under a digest key carries the full id, and readers check it.
 */
import { createHash } from 'node:crypto';

const PLAIN = /^[A-Za-z0-9_-]{1,128}$/;
const MAX_ENCODED = 200;

export function keyPart(value: string): string {
  if (PLAIN.test(value)) return value;
  const encoded = Buffer.from(value, 'utf8').toString('base64url');
  if (encoded.length <= MAX_ENCODED) return `=${encoded}`;
  return `==${createHash('sha256').update(value, 'utf8').digest('base64url')}`;
}

/** Bucket names share a prefix, so several Engram deployments (or test runs) can share a server. */
export interface ControlBuckets {
  directory: string;
  conversations: string;
  responses: string;
  /** An Object Store for values larger than one KV value: response records, and conversation states (`conv/...`). */
  responseBodies: string;
  indexes: string;
  /** Dashboard users, sessions, OAuth clients, grants and the signing key. */
  accounts: string;
  /** Requests, injected reflections and extractions per agent and day. */
  activity: string;
  /** The request log: one entry per proxied request, kept `ENGRAM_REQUEST_LOG_DAYS`. */
  requests: string;
}

const PREFIX = /^[A-Za-z0-9_-]{1,64}$/;

export function controlBuckets(prefix: string): ControlBuckets {
  if (!PREFIX.test(prefix)) throw new Error(`Invalid NATS bucket prefix "${prefix}": use letters, digits, _ and -`);
  return {
    directory: `${prefix}_directory`,
    conversations: `${prefix}_conversations`,
    responses: `${prefix}_responses`,
    responseBodies: `${prefix}_response_bodies`,
    indexes: `${prefix}_indexes`,
    accounts: `${prefix}_accounts`,
    activity: `${prefix}_activity`,
    requests: `${prefix}_requests`,
  };
}

/** The JetStream streams behind the buckets (`KV_<bucket>`, `OBJ_<bucket>`, ADR-8 and ADR-20). */
export function controlStreams(prefix: string): string[] {
  const b = controlBuckets(prefix);
  return [`KV_${b.directory}`, `KV_${b.conversations}`, `KV_${b.responses}`, `OBJ_${b.responseBodies}`, `KV_${b.indexes}`, `KV_${b.accounts}`, `KV_${b.activity}`, `KV_${b.requests}`];
}

/** The subject a KV key is stored under (ADR-8), for stream purges by subject. */
export function kvSubject(bucket: string, key: string): string {
  return `$KV.${bucket}.${key}`;
}

/** Keys of the directory bucket: records by id, and name claims that make names unique. */
export const directoryKeys = {
  org: (orgId: string) => `org.${keyPart(orgId)}`,
  agent: (agentId: string) => `agent.${keyPart(agentId)}`,
  token: (tokenHash: string) => `token.${keyPart(tokenHash)}`,
  orgName: (name: string) => `orgname.${keyPart(name)}`,
  agentName: (orgId: string, name: string) => `agentname.${keyPart(orgId)}.${keyPart(name)}`,
};

export const conversationKeys = {
  conversation: (agentId: string, id: string) => `conv.${keyPart(agentId)}.${keyPart(id)}`,
  session: (agentId: string, digest: string) => `session.${keyPart(agentId)}.${keyPart(digest)}`,
  /** Filters over every conversation / session mark, or those of one agent. */
  conversations: (agentId?: string) => (agentId === undefined ? 'conv.>' : `conv.${keyPart(agentId)}.>`),
  sessions: (agentId?: string) => (agentId === undefined ? 'session.>' : `session.${keyPart(agentId)}.>`),
};

export const responseKeys = {
  response: (agentId: string, id: string) => `resp.${keyPart(agentId)}.${keyPart(id)}`,
  responses: (agentId?: string) => (agentId === undefined ? 'resp.>' : `resp.${keyPart(agentId)}.>`),
  /** The Object Store name of a large record's sealed content. */
  body: (agentId: string, id: string) => `${keyPart(agentId)}.${keyPart(id)}`,
};

export const indexKeys = {
  index: (agentId: string) => `index.${keyPart(agentId)}`,
};

/**
 * Keys of the accounts bucket: records by id, the email claims that make emails unique
 * (`name-claims.ts`), one marker per grant under its user so a user's grants are listed
 * without reading everyone's, and the one signing key.
 */
export const accountKeys = {
  user: (userId: string) => `user.${keyPart(userId)}`,
  email: (email: string) => `email.${keyPart(email)}`,
  session: (sessionId: string) => `session.${keyPart(sessionId)}`,
  client: (clientId: string) => `client.${keyPart(clientId)}`,
  grant: (grantId: string) => `grant.${keyPart(grantId)}`,
  userGrant: (userId: string, grantId: string) => `ugrant.${keyPart(userId)}.${keyPart(grantId)}`,
  signingKey: 'signingkey',
  /** Filters over every user, every email claim, every session, every client, every grant, every grant marker, or the markers of one user. */
  users: 'user.>',
  emails: 'email.>',
  sessions: 'session.>',
  clients: 'client.>',
  grants: 'grant.>',
  userGrants: (userId?: string) => (userId === undefined ? 'ugrant.>' : `ugrant.${keyPart(userId)}.>`),
};

/**
 * Keys of the activity bucket: one per agent and day, the day last, so one agent's days
 * are one filter. A day is `YYYY-MM-DD` (checked before it reaches a key), which `keyPart`
 * keeps as it is.
 */
export const activityKeys = {
  day: (agentId: string, day: string) => `act.${keyPart(agentId)}.${keyPart(day)}`,
  /** Filters over every agent's days, or those of one agent. */
  days: (agentId?: string) => (agentId === undefined ? 'act.>' : `act.${keyPart(agentId)}.>`),
};

/** Keys of the request log bucket: one per request, under its agent, so one agent's log is one filter. */
export const requestKeys = {
  request: (agentId: string, id: string) => `req.${keyPart(agentId)}.${keyPart(id)}`,
  /** Filters over every agent's entries, or those of one agent. */
  requests: (agentId?: string) => (agentId === undefined ? 'req.>' : `req.${keyPart(agentId)}.>`),
};
