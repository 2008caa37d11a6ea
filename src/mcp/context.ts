import { z } from 'zod';
import { projectScope } from '../domain/scope.js';
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

/**
 * The `project` parameter of the memory tools: a coding client's MCP requests say nothing
 * of where it runs, but its model knows, and the memory index Engram gives it names the
 * project (`renderIndexBlock`).
 */
export const projectParameter = (effect: string) =>
  z
    .string()
    .max(1024)
    .optional()
    .describe(`The project you are working in: its repository's folder name (e.g. "alpha-shop") or path. ${effect}`);

/**
 * What one tool call sees and where it writes (DESIGN section 13): the session's scope and
 * user (its headers) and, where the headers name no project, the project the model names.
 * Undefined when that is no usable name: the tool says so, and the model can retry.
 */
export function callVisibility(context: McpContext, project: string | undefined): Visibility | undefined {
  if (context.visible.scope !== undefined || project === undefined || project.trim() === '') return context.visible;
  const scope = projectScope(project);
  return scope === undefined ? undefined : { ...context.visible, scope };
}

export function badProject(project: string | undefined) {
  return textResult(`"${String(project).slice(0, 200)}" is no project name: give the repository's folder name (e.g. "alpha-shop") or its absolute path.`, {
    isError: true,
  });
}

/** A tool's text answer; `isError` for failures the model should see and can act on. */
export function textResult(text: string, options: { isError?: boolean; structured?: Record<string, unknown> } = {}) {
  return {
    content: [{ type: 'text' as const, text }],
    ...(options.structured ? { structuredContent: options.structured } : {}),
    ...(options.isError ? { isError: true } : {}),
  };
}
