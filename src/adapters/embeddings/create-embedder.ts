import type { Config } from '../../config.js';
import type { Embedder, UpstreamClient } from '../../ports/index.js';
import { OpenAiEmbedder } from './openai-embedder.js';
import { createLocalEmbedder } from '../../memory/embedders/local-embedder.js';
import { createSemanticEmbedder } from '../../memory/embedders/semantic-embedder.js';
import type { WordVectors } from '../../memory/embedders/word-vectors.js';

/**
 * The configured embedder: an OpenAI-compatible endpoint when `ENGRAM_EMBEDDINGS_URL` is
 * set; else the local semantic embedder (hashed words joined with pre-trained word
 * vectors), or the hashing embedder alone when the word vectors could not be loaded
 * (DESIGN section 8).
 */
export function createEmbedder(config: Config, upstream: UpstreamClient, words: WordVectors | undefined): Embedder {
  if (config.embeddings) {
    return new OpenAiEmbedder({
      url: config.embeddings.url,
      model: config.embeddings.model,
      apiKey: config.embeddings.apiKey,
      upstream,
      timeoutMs: Math.min(config.upstreamTimeoutMs, 60_000),
    });
  }
  return words ? createSemanticEmbedder(words) : createLocalEmbedder();
}
