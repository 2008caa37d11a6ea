/** A request log entry for tests (`ports/requests.ts`): nothing added, kept or rebuilt unless `fields` says. Not a test file. */
import type { RequestEntry } from '../../src/ports/index.js';

export function requestEntry(fields: Pick<RequestEntry, 'id' | 'agentId' | 'at'> & Partial<RequestEntry>): RequestEntry {
  return {
    protocol: 'messages',
    conversationId: 'cnv_test',
    status: 200,
    outcome: 'settled',
    latencyMs: 812.4,
    upstreamMs: 790.1,
    injected: [],
    kept: [],
    rebuilt: null,
    reason: null,
    bar: null,
    nearMisses: [],
    scope: null,
    user: null,
    answerLimit: null,
    ...fields,
  };
}
