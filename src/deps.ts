import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { Control } from './control/control.js';
import type { Embedder, EventBus, ReflectionStore, UpstreamClient } from './ports/index.js';
import type { Reranker } from './memory/rerank.js';

/** Everything `buildApp` needs, connected by `main.ts` (or by a test). */
export interface Deps {
  config: Config;
  /** The control plane: directory, conversations, responses, root indexes. */
  control: Control;
  reflections: ReflectionStore;
  bus: EventBus;
  embedder: Embedder;
  /** Soft-match reranking of searches, when the word vectors are loaded. */
  reranker?: Reranker;
  upstream: UpstreamClient;
  /** SHA-256 of the admin token (see `security/tokens.ts`). */
  adminTokenHash: string;
  now: () => number;
}

export type Logger = FastifyBaseLogger;
