import type { Agent } from '../domain/types.js';
import type { IndexRefresher } from '../memory/index-refresh.js';
import type { ControlStore, Embedder, ReflectionStore } from '../memory/ports.js';
import type { ReflectionWriter } from '../memory/reflection-writer.js';

/** What every tool of one agent's MCP server works with. */
export interface McpContext {
  /** The agent, read afresh per call (its settings may change during a session). */
  agent(): Promise<Agent>;
  control: ControlStore;
  reflections: ReflectionStore;
  embedder: Embedder;
  writer: ReflectionWriter;
  index: IndexRefresher;
  now: () => number;
}

/** A tool's text answer; `isError` for failures the model should see and can act on. */
export function textResult(text: string, options: { isError?: boolean; structured?: Record<string, unknown> } = {}) {
  return {
    content: [{ type: 'text' as const, text }],
    ...(options.structured ? { structuredContent: options.structured } : {}),
    ...(options.isError ? { isError: true } : {}),
  };
}
