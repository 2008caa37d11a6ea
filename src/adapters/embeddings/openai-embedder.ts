/**
 * An embedder backed by any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Azure
 * behind a gateway, Ollama, vLLM, LiteLLM, ...), through the UpstreamClient port.
 */
import type { Embedder, UpstreamClient } from '../../ports/index.js';
import { readText } from '../../memory/http-body.js';

export interface OpenAiEmbedderOptions {
  /** Base URL; `/v1/embeddings` is appended (a base already ending in `/v1` gets `/embeddings`). */
  url: string;
  model: string;
  apiKey?: string;
  upstream: UpstreamClient;
  /** Known vector size; otherwise learnt from the first response. */
  dimensions?: number;
  /** Texts per request; large batches are split. */
  batchSize?: number;
  /** Per-request time limit. */
  timeoutMs?: number;
}

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

interface EmbeddingsResponse {
  data?: { embedding?: unknown; index?: unknown }[];
}

export class EmbeddingsError extends Error {
  override name = 'EmbeddingsError';
}

/** The endpoint for a configured base URL. */
export function embeddingsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return /\/v1$/.test(trimmed) ? `${trimmed}/embeddings` : `${trimmed}/v1/embeddings`;
}

/**
 * Vectors are L2-normalised here (most providers already do; some local servers do not),
 * so cosine is a dot product everywhere. `id` is `openai:<model>`: a model change
 * re-embeds.
 */
export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  readonly #options: OpenAiEmbedderOptions;
  readonly #url: string;
  #dimensions: number;

  constructor(options: OpenAiEmbedderOptions) {
    this.#options = options;
    this.#url = embeddingsUrl(options.url);
    this.#dimensions = options.dimensions ?? 0;
    this.id = `openai:${options.model}`;
  }

  /** 0 until configured or learnt from the first response. */
  get dimensions(): number {
    return this.#dimensions;
  }

  async embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]> {
    const batchSize = this.#options.batchSize ?? 128;
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      out.push(...(await this.#embedBatch(texts.slice(start, start + batchSize), signal)));
    }
    return out;
  }

  async #embedBatch(texts: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const timeout = AbortSignal.timeout(this.#options.timeoutMs ?? 60_000);
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    const response = await this.#options.upstream.send({
      url: this.#url,
      method: 'POST',
      headers,
      // Providers reject empty strings; a space embeds as "nothing" just as well.
      body: JSON.stringify({ model: this.#options.model, input: texts.map((t) => (t === '' ? ' ' : t)) }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
    const text = await readText(response.body, MAX_RESPONSE_BYTES);
    if (response.status < 200 || response.status > 299) {
      throw new EmbeddingsError(`embeddings endpoint answered ${response.status}: ${text.slice(0, 300)}`);
    }
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(text) as EmbeddingsResponse;
    } catch {
      throw new EmbeddingsError('embeddings endpoint answered with invalid JSON');
    }
    const data = Array.isArray(parsed.data) ? parsed.data : [];
    if (data.length !== texts.length) {
      throw new EmbeddingsError(`embeddings endpoint returned ${data.length} vectors for ${texts.length} texts`);
    }
    const vectors: Float32Array[] = new Array(texts.length);
    data.forEach((item, position) => {
      const index = typeof item.index === 'number' ? item.index : position;
      if (!Array.isArray(item.embedding) || index < 0 || index >= texts.length) {
        throw new EmbeddingsError('embeddings endpoint returned a malformed item');
      }
      vectors[index] = this.#vector(item.embedding as unknown[]);
    });
    return vectors;
  }

  #vector(values: unknown[]): Float32Array {
    if (this.#dimensions === 0) this.#dimensions = values.length;
    if (values.length !== this.#dimensions) {
      throw new EmbeddingsError(`expected ${this.#dimensions} dimensions, got ${values.length}`);
    }
    const vector = Float32Array.from(values, (v) => (typeof v === 'number' ? v : Number.NaN));
    let sum = 0;
    for (const v of vector) sum += v * v;
    if (!Number.isFinite(sum)) throw new EmbeddingsError('embeddings endpoint returned a non-numeric vector');
    if (sum > 0) {
      const scale = 1 / Math.sqrt(sum);
      for (let i = 0; i < vector.length; i++) vector[i] *= scale;
    }
    return vector;
  }
}
