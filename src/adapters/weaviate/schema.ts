/**
 * The Weaviate collection that holds every agent's reflections: one tenant per agent
 * (multi-tenancy gives each agent its own shard, so searches cannot cross agents and
 * BM25 statistics are per agent, like the embedded store's), self-provided vectors in one
 * named HNSW vector with cosine distance, and the properties below.
 */
import weaviate, {
  type Collection,
  type CollectionConfigCreate,
  type WeaviateClass,
  type WeaviateClient,
} from 'weaviate-client';

export const DEFAULT_COLLECTION = 'EngramReflection';

/** The one named vector. Named explicitly so queries never depend on a server default. */
export const VECTOR_NAME = 'default';

/**
 * An object's properties. Timestamps are `number` (float64) epoch milliseconds, as in
 * the port: exact for every integer below 2^53, sorted numerically, and no round-trip
 * through RFC 3339 dates (whose precision and time zones would be one more thing to get
 * right). `lastUsedAt` is absent while the reflection has never been used.
 */
export type ReflectionProperties = {
  reflectionId: string;
  agentId: string;
  kind: string;
  content: string;
  topic: string;
  tags: string[];
  /** The keyword terms of content, topic and tags (`memory/keywords.ts`), space-separated: what BM25 searches. */
  terms: string;
  source: string;
  createdAt: number;
  updatedAt: number;
  lastUsedAt?: number;
  useCount: number;
  embedderId: string;
  /** `ReflectionOrigin` as JSON; empty when the reflection was stored on purpose. */
  origin?: string;
  /**
   * Whether the reflection is superseded: what searches and `list` filter on (see
   * `currentOnly` in reflection-store.ts for why a boolean beside `supersededBy`).
   * Absent on objects stored before it existed, which are all current.
   */
  superseded?: boolean;
  /** The id of the reflection that replaced this one; empty or absent while current. */
  supersededBy?: string;
  /** When it was superseded; read only beside a `supersededBy` id (a PATCH cannot remove it). */
  supersededAt?: number;
  /** A `TagAuthor`; empty or absent while no one has tagged it. */
  tagsBy?: string;
  /**
   * The reflection's scope and user (DESIGN section 13), empty when none; `scoped` and
   * `personal` say whether each is set, the booleans filters use (absent on older
   * objects, which hold everywhere and are the agent's: see `currentOnly` in
   * reflection-store.ts for why a boolean).
   */
  scope?: string;
  scoped?: boolean;
  user?: string;
  personal?: boolean;
};

/** The collection, typed by its properties (per tenant: `.withTenant(name)`). */
export type ReflectionObjects = Collection<ReflectionProperties, string>;

/**
 * The property BM25 searches (`keywords`): the stems Engram computes itself, so Weaviate
 * and the embedded store match on the same terms (Weaviate's own tokenisers do not stem).
 */
export const KEYWORD_PROPERTIES = ['terms'] as const;

/**
 * Text that is matched whole (ids, enums) uses `field` tokenisation and only a filterable
 * index; the keyword terms are already stems, one per space: `whitespace` tokenisation
 * and only a searchable index. The text itself is stored, not indexed.
 */
const exact = { tokenization: 'field', indexFilterable: true, indexSearchable: false } as const;
const stored = { tokenization: 'word', indexFilterable: false, indexSearchable: false } as const;
const terms = { tokenization: 'whitespace', indexFilterable: false, indexSearchable: true } as const;
const PROPERTIES: NonNullable<CollectionConfigCreate<ReflectionProperties, string>['properties']> = [
  { name: 'reflectionId', dataType: 'text', ...exact },
  { name: 'agentId', dataType: 'text', ...exact },
  { name: 'kind', dataType: 'text', ...exact },
  { name: 'content', dataType: 'text', ...stored },
  { name: 'topic', dataType: 'text', ...stored },
  { name: 'tags', dataType: 'text[]', ...stored },
  { name: 'terms', dataType: 'text', ...terms },
  { name: 'source', dataType: 'text', ...exact },
  { name: 'createdAt', dataType: 'number' },
  { name: 'updatedAt', dataType: 'number' },
  { name: 'lastUsedAt', dataType: 'number' },
  { name: 'useCount', dataType: 'int' },
  { name: 'embedderId', dataType: 'text', ...exact },
  { name: 'origin', dataType: 'text', ...stored },
  { name: 'superseded', dataType: 'boolean', indexFilterable: true },
  { name: 'supersededBy', dataType: 'text', ...exact },
  { name: 'supersededAt', dataType: 'number' },
  { name: 'tagsBy', dataType: 'text', ...exact },
  { name: 'scope', dataType: 'text', ...exact },
  { name: 'scoped', dataType: 'boolean', indexFilterable: true },
  { name: 'user', dataType: 'text', ...exact },
  { name: 'personal', dataType: 'boolean', indexFilterable: true },
];

export function collectionConfig(name: string): CollectionConfigCreate<ReflectionProperties, string> {
  return {
    name,
    description: 'Engram reflections: one tenant per agent, self-provided vectors',
    multiTenancy: weaviate.configure.multiTenancy({
      enabled: true,
      // The adapter creates each tenant before its first write; auto-creation covers the
      // race where another replica removed the tenant (deleteAgent) in the meantime.
      autoTenantCreation: true,
      // An operator may deactivate idle tenants; reads and writes bring them back.
      autoTenantActivation: true,
    }),
    properties: PROPERTIES,
    vectorizers: weaviate.configure.vectors.selfProvided({
      name: VECTOR_NAME,
      // Explicitly HNSW: newer servers may default to another index type.
      vectorIndexConfig: weaviate.configure.vectorIndex.hnsw({ distanceMetric: 'cosine' }),
    }),
  };
}

/**
 * Why an existing collection (made by another replica, an older release or an operator)
 * cannot hold reflections; empty when it can. Checked at start-up so a mismatch fails
 * there, with a reason, instead of as odd search results later. It reads the schema as
 * Weaviate sends it (`exportToJson`), not the client's typed configuration, whose strict
 * parser rejects whole schemas over fields this check does not need.
 */
export function schemaProblems(existing: WeaviateClass): string[] {
  const problems = structuralProblems(existing);
  for (const wanted of PROPERTIES) {
    const found = existing.properties?.find((p) => p.name === wanted.name);
    const dataType = found?.dataType?.[0];
    if (!found) problems.push(`property ${wanted.name} is missing`);
    else if (dataType !== wanted.dataType) {
      problems.push(`property ${wanted.name} is ${String(dataType)}, not ${wanted.dataType}`);
    }
    else if (wanted.indexSearchable && found.indexSearchable === false) {
      problems.push(`property ${wanted.name} is not searchable by keywords`);
    } else if (wanted.indexSearchable && found.tokenization && found.tokenization !== wanted.tokenization) {
      // `field` would only match the whole text; the others differ from the query's words.
      problems.push(`property ${wanted.name} is tokenised as ${found.tokenization}, not ${wanted.tokenization}`);
    }
  }
  return problems;
}

/** What makes a collection unfit whatever its properties: multi-tenancy, the vector. */
function structuralProblems(existing: WeaviateClass): string[] {
  const problems: string[] = [];
  if (!existing.multiTenancyConfig?.enabled) problems.push('multi-tenancy is not enabled');
  const vector = existing.vectorConfig?.[VECTOR_NAME];
  const distance = vector?.vectorIndexConfig?.distance;
  if (!vector) problems.push(`it has no vector named "${VECTOR_NAME}"`);
  else if (distance !== 'cosine') problems.push(`vector "${VECTOR_NAME}" uses ${String(distance)} distance, not cosine`);
  return problems;
}

/**
 * The properties a collection made by an older release lacks (`origin`, `superseded`,
 * `supersededBy`, `supersededAt`, `tagsBy`, the scope's four came later): added in place, since Weaviate
 * adds a property to a live collection. Objects stored before have no value for it, which
 * every read and filter of the adapter takes as the default (see `currentOnly` in reflection-store.ts).
 */
export function missingProperties(existing: WeaviateClass): typeof PROPERTIES {
  return PROPERTIES.filter((wanted) => !existing.properties?.some((p) => p.name === wanted.name));
}

/**
 * Creates the collection unless it exists, adds the properties an older release's
 * collection lacks, then checks it. Idempotent when several replicas start together: a
 * creation that loses the race fails, and the winner's collection is then found (the
 * schema may take a moment to reach this node); a property another replica added first
 * fails to add here, and is then found by the check.
 */
export async function ensureCollection(client: WeaviateClient, name: string): Promise<void> {
  if (!(await client.collections.exists(name))) {
    try {
      await client.collections.create<ReflectionProperties, string>(collectionConfig(name));
    } catch (error) {
      if (!(await appears(client, name))) throw error;
    }
  }
  let existing = await client.collections.exportToJson(name);
  // Properties are added only to a collection otherwise fit: an operator's unrelated
  // collection of the same name is reported, not altered.
  const missing = structuralProblems(existing).length === 0 ? missingProperties(existing) : [];
  if (missing.length > 0) {
    const config = client.collections.use(name).config;
    for (const property of missing) {
      try {
        await config.addProperty(property);
      } catch (error) {
        // Another replica may have added it first: only a property still missing is an error.
        const now = await client.collections.exportToJson(name);
        if (!now.properties?.some((p) => p.name === property.name)) throw error;
      }
    }
    existing = await client.collections.exportToJson(name);
  }
  const problems = schemaProblems(existing);
  if (problems.length > 0) {
    throw new Error(`collection ${name} cannot hold reflections: ${problems.join('; ')}`);
  }
}

async function appears(client: WeaviateClient, name: string): Promise<boolean> {
  for (let attempt = 0; attempt < 10; attempt++) {
    if (await client.collections.exists(name)) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}
