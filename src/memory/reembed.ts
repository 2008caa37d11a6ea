/**
 * DESIGN section 8: each vector records its embedder, and changing the embedder
 * re-embeds. Reflections whose vectors came from another embedder are embedded again
 * with the current one, agent by agent, in batches; their other fields (times, use
 * counts) stay as they were. Until an agent is done its old vectors simply match nothing
 * of another size, so retrieval degrades to keywords instead of failing. It yields to the
 * event loop after each batch, so requests are served while it runs.
 */
import type { Embedder, ReflectionStore, StoredReflection } from '../ports/index.js';
import type { Control } from '../control/control.js';
import { embeddingText } from '../domain/reflection-text.js';
import { listAllReflections } from './root-index.js';

export interface ReembedDeps {
  control: Control;
  reflections: ReflectionStore;
  embedder: Embedder;
}

const BATCH = 64;

/** Re-embeds every stale reflection of every agent; returns how many were re-embedded. */
export async function reembedStale(deps: ReembedDeps, signal?: AbortSignal): Promise<number> {
  let done = 0;
  for (const org of await deps.control.directory.listOrgs()) {
    for (const agent of await deps.control.directory.listAgents(org.id)) {
      const stale = (await listAllReflections(deps.reflections, agent.id)).filter((reflection) => reflection.embedderId !== deps.embedder.id);
      for (let at = 0; at < stale.length; at += BATCH) {
        if (signal?.aborted) return done;
        const batch = stale.slice(at, at + BATCH);
        const vectors = await deps.embedder.embed(batch.map(embeddingText));
        const rows: StoredReflection[] = batch.map((reflection, i) => ({ ...reflection, embedderId: deps.embedder.id, vector: vectors[i] }));
        await deps.reflections.upsert(rows);
        done += rows.length;
        // Embedding and an embedded store resolve at once: without a real pause between
        // batches the whole re-embedding would hold the event loop and stall every request.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  return done;
}
