/** Builders shared by the memory tests. Not a test file: it never calls `run()`. */
import type { Reflection } from '../../src/domain/types.js';

export function reflection(overrides: Partial<Reflection> & Pick<Reflection, 'id'>): Reflection {
  return {
    agentId: 'agt_test',
    kind: 'factual',
    content: `Content of ${overrides.id}`,
    topic: 'general',
    tags: [],
    source: 'conversation',
    createdAt: 1_000,
    updatedAt: 1_000,
    lastUsedAt: null,
    useCount: 0,
    embedderId: 'local-hash-v1-256',
    ...overrides,
  };
}
