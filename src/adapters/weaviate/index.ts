/**
 * The distributed reflection store (DESIGN sections 2 and 9), through weaviate-client v3.
 * Engram supports Weaviate 1.27 and newer (refused below, at connect). What the adapter
 * itself relies on is older: tenant look-up by name (1.25), automatic tenant creation and
 * activation on writes (1.25.2), named vectors with self-provided vectors (1.24).
 */
import { connectWeaviate, redactUrl, type WeaviateConnection } from './connect.js';
import { storeError } from './errors.js';
import { isCollectionName } from './ids.js';
import { WeaviateReflectionStore } from './reflection-store.js';
import { DEFAULT_COLLECTION, ensureCollection } from './schema.js';

export { WeaviateReflectionStore } from './reflection-store.js';
export type { WeaviateConnection } from './connect.js';

export interface OpenWeaviateReflectionStoreOptions extends WeaviateConnection {
  /** `[A-Z][_0-9A-Za-z]*`; default `EngramReflection`. Created if missing. */
  collection?: string;
  /** Longest time a `markUsed` waits in memory before it is written (default 1 s). */
  usageFlushMs?: number;
  /** The server's QUERY_MAXIMUM_RESULTS, if changed from 10 000. */
  maxQueryResults?: number;
  /** Failures of background writes of uses (default: one line on stderr). */
  onError?: (error: unknown) => void;
  now?: () => number;
}

/**
 * Connects, creates the collection unless it exists (several replicas may start at
 * once), checks that an existing one fits, and returns the store; closing the store
 * closes the connection. Any failure is a `WeaviateStoreError` naming Weaviate.
 */
export async function openWeaviateReflectionStore(
  options: OpenWeaviateReflectionStoreOptions,
): Promise<WeaviateReflectionStore> {
  const collection = checkedCollection(options.collection ?? DEFAULT_COLLECTION);
  const secrets = options.apiKey ? [options.apiKey] : [];
  const client = await connectWeaviate(options);
  try {
    await ensureCollection(client, collection);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw storeError(`open collection ${collection} at ${redactUrl(options.url)}`, error, secrets);
  }
  // The store reads its own options (usageFlushMs, maxQueryResults, onError, now) of these.
  return new WeaviateReflectionStore(client, { ...options, collection, secrets, ownsClient: true });
}

/**
 * Deletes a whole collection, every agent's reflections with it (an operator's reset, and
 * the tests' cleanup). Deleting one that does not exist is not an error.
 */
export async function dropWeaviateCollection(options: WeaviateConnection & { collection: string }): Promise<void> {
  const collection = checkedCollection(options.collection);
  const client = await connectWeaviate(options);
  try {
    await client.collections.delete(collection);
  } catch (error) {
    throw storeError(`drop collection ${collection}`, error, options.apiKey ? [options.apiKey] : []);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/**
 * The client capitalises a collection name's first letter by itself; a name it would
 * change is refused instead, so Engram never writes somewhere other than configured.
 */
function checkedCollection(name: string): string {
  if (!isCollectionName(name)) {
    throw new Error(`Weaviate collection name ${JSON.stringify(name)} must match [A-Z][_0-9A-Za-z]*`);
  }
  return name;
}
