/**
 * Names Weaviate needs that the port does not have: an object UUID per (agent, reflection
 * id) and a tenant name per agent. Both must be stable forever: a UUID that changed
 * between releases would turn every re-learned reflection into a duplicate.
 */
import { createHash } from 'node:crypto';

/**
 * Engram's own UUID v5 namespace (RFC 9562, section 5.5), fixed once. The UUIDs are
 * computed here rather than by the client's `generateUuid5`, which concatenates its two
 * arguments under the DNS namespace: a change there in a client upgrade would silently
 * re-key every stored reflection.
 */
export const REFLECTION_NAMESPACE = '0a7d562b-788d-4f16-9842-445990198649';

/** The object UUID of a reflection. JSON keeps (`a`, `bc`) and (`ab`, `c`) apart. */
export function reflectionUuid(agentId: string, id: string): string {
  return uuidV5(JSON.stringify([agentId, id]), REFLECTION_NAMESPACE);
}

/** A name-based UUID (version 5: SHA-1 of the namespace's 16 bytes and the UTF-8 name). */
export function uuidV5(name: string, namespace: string): string {
  const hex = namespace.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a UUID: ${namespace}`);
  const bytes = createHash('sha1').update(Buffer.from(hex, 'hex')).update(name, 'utf8').digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8] & 0x3f) | 0x80; // RFC variant
  const out = bytes.toString('hex');
  return `${out.slice(0, 8)}-${out.slice(8, 12)}-${out.slice(12, 16)}-${out.slice(16, 20)}-${out.slice(20)}`;
}

/**
 * The tenant of an agent. Weaviate accepts `[A-Za-z0-9_-]{1,64}` (its ShardNameRegexCore);
 * Engram's agent ids (`agt_` + base62) always fit and are used as they are, so an operator
 * sees the agent id in Weaviate. Any other id (with a hyphen, too long, other characters)
 * becomes `h-` + a SHA-256 prefix: the hyphen keeps the two forms from ever colliding.
 */
export function tenantName(agentId: string): string {
  if (/^[A-Za-z0-9_]{1,64}$/.test(agentId)) return agentId;
  return `h-${createHash('sha256').update(agentId, 'utf8').digest('hex').slice(0, 60)}`;
}

/** Weaviate collection (class) names: `[A-Z][_0-9A-Za-z]*` (its ClassNameRegexCore). */
export function isCollectionName(name: string): boolean {
  return /^[A-Z][_0-9A-Za-z]*$/.test(name);
}
