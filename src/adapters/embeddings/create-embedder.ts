import type { Config } from '../../config.js';
import type { Embedder, UpstreamClient } from '../../ports/index.js';
import { OpenAiEmbedder } from './openai-embedder.js';
import { createLocalEmbedder } from '../../memory/embedders/local-embedder.js';

/**
 * The configured embedder: an OpenAI-compatible endpoint when `ENGRAM_EMBEDDINGS_URL` is
 * set, else the local hashing embedder (DESIGN section 8).
 */
export function createEmbedder(config: Config, upstream: UpstreamClient): Embedder {
  if (!config.embeddings) return createLocalEmbedder();
  return new OpenAiEmbedder({
    url: config.embeddings.url,
    model: config.embeddings.model,
    apiKey: config.embeddings.apiKey,
    upstream,
    timeoutMs: Math.min(config.upstreamTimeoutMs, 60_000),
  });
}
