import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import type { ControlStore, Embedder, EventBus, ReflectionStore, UpstreamClient } from './memory/ports.js';

/** Everything `buildApp` needs, connected by `main.ts` (or by a test). */
export interface Deps {
  config: Config;
  control: ControlStore;
  reflections: ReflectionStore;
  bus: EventBus;
  embedder: Embedder;
  upstream: UpstreamClient;
  /** SHA-256 of the admin token (see `security/tokens.ts`). */
  adminTokenHash: string;
  now: () => number;
}

export type Logger = FastifyBaseLogger;
