import type { Agent, Visibility } from '../domain/types.js';
import type { IndexRefresher } from '../memory/index-refresh.js';
import type { Embedder, ReflectionStore } from '../ports/index.js';
import type { Control } from '../control/control.js';
import type { ReflectionWriter } from '../memory/reflection-writer.js';
import type { MemorySearchDeps } from '../memory/memory-search.js';

/** What every tool of one agent's MCP server works with. */
export interface McpContext {
  /** The agent, read afresh per call (its settings may change during a session). */
  agent(): Promise<Agent>;
  control: Control;
  reflections: ReflectionStore;
  embedder: Embedder;
  writer: ReflectionWriter;
  /** How `recall` searches: the same as injection. */
  search: MemorySearchDeps;
  index: IndexRefresher;
  now: () => number;
  /**
   * The scope and user of the client's session (`x-engram-scope`, `x-engram-user` on the
   * MCP request, DESIGN section 13): what `recall` and the index show, where `remember`
   * stores.
   */
  visible: Visibility;
}

/** A tool's text answer; `isError` for failures the model should see and can act on. */
export function textResult(text: string, options: { isError?: boolean; structured?: Record<string, unknown> } = {}) {
  return {
    content: [{ type: 'text' as const, text }],
    ...(options.structured ? { structuredContent: options.structured } : {}),
    ...(options.isError ? { isError: true } : {}),
  };
}
