/**
 * The request log in one NATS KV bucket shared by every replica, one key per request,
 * `req.<agent>.<id>` (`keys.ts`, `requestKeys`), whose value is the entry (with the full
 * agent id, which readers check: a key may hold only a digest of a long id). The bucket's
 * stream keeps messages `ENGRAM_REQUEST_LOG_DAYS` (its `max_age`), so NATS forgets old
 * entries by itself; `prune` also forgets by the entry's own time, for a retention
 * shortened since the entries were written and for a clock that is not NATS's.
 *
 * The KV revision (the stream sequence) is the append order, and the cursor is the last
 * revision a page showed. A page is one ordered consumer over the agent's keys, sorted
 * here: it reads the agent's whole retained log (a few hundred bytes an entry), which is
 * what 2.9 allows without reverse iteration; an agent with tens of thousands of requests
 * a week pays for it in the listing (0.15 to 0.75 s a page for 5,000 entries, measured on
 * a busy 2-core machine), never on the proxy path. A listing's filter is applied in that
 * scan, before the page is cut, so a page holds `limit` matching entries and its cursor
 * (a revision) pages on under the same filter.
 */
import { cursorOf, pageStart } from '../../../domain/request-log.js';
import { EngramError } from '../../../errors.js';
import type { AnswerLimit, InjectedReflection, NothingAdded, RequestEntry, RequestFilter, RequestLog, RequestPage } from '../../../ports/requests.js';
import { keptList, matchesFilter, nearMissList, rebuiltOf, storedEntry } from '../../request-entries.js';
import { requestKeys } from './keys.js';
import { KvStore, readJson } from './kv-support.js';

/** The NATS KV RequestLog; the connection belongs to its opener. */
export class NatsRequestLog extends KvStore implements RequestLog {
  async append(entry: RequestEntry): Promise<void> {
    await this.guard('append', () => this.kv.put(requestKeys.request(entry.agentId, entry.id), JSON.stringify(storedEntry(entry))));
  }

  async list(agentId: string, options: { limit: number; cursor?: string } & RequestFilter): Promise<RequestPage> {
    const { limit } = options;
    const start = pageStart(options);
    if ('problem' in start) throw new EngramError('invalid_request', start.problem, { param: start.param });
    const { below } = start;
    return this.guard('list', async () => {
      const found = await this.scan(requestKeys.requests(agentId), (entry) => {
        if (entry.revision >= below) return undefined;
        const value = entry.json<StoredEntry>();
        if (value.agentId !== agentId) return undefined;
        const read = entryOf(value);
        return matchesFilter(read, options) ? read : undefined;
      });
      const older = found.sort((a, b) => b.revision - a.revision);
      const page = older.slice(0, limit);
      return { entries: page.map(({ item }) => item), ...(older.length > limit ? { cursor: cursorOf(page[page.length - 1].revision) } : {}) };
    });
  }

  async get(agentId: string, id: string): Promise<RequestEntry | undefined> {
    return this.guard('get', async () => {
      const stored = await readJson<StoredEntry>(this.kv, requestKeys.request(agentId, id), (value) => value.agentId === agentId && value.id === id);
      return stored && entryOf(stored.value);
    });
  }

  /** Scans every agent's entries and purges those from before `before` (each key is written once). */
  async prune(before: number): Promise<number> {
    return this.guard('prune', () => this.pruneOld(requestKeys.requests(), (entry) => entry.json<RequestEntry>().at < before));
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.guard('deleteAgent', () => this.purgeAll(requestKeys.requests(agentId)));
  }
}

/**
 * An entry as stored by any version: before the scope fields (issue 25) it had no `scope`
 * and `user`; before issue 32 an injected reflection's number was `score`, why memory was
 * left out was `skipped` (`client_chore`, `injection_off`), and nothing else of the kept
 * block, the bar or the near misses was written.
 */
type StoredEntry = Omit<RequestEntry, 'injected' | 'kept' | 'rebuilt' | 'reason' | 'bar' | 'nearMisses' | 'scope' | 'user' | 'answerLimit'> & {
  injected: Array<Omit<InjectedReflection, 'relevance'> & { relevance?: number; score?: number }>;
  kept?: RequestEntry['kept'];
  rebuilt?: RequestEntry['rebuilt'];
  reason?: NothingAdded | null;
  skipped?: NothingAdded | null;
  bar?: number | null;
  nearMisses?: RequestEntry['nearMisses'];
  scope?: string | null;
  user?: string | null;
  answerLimit?: AnswerLimit | null;
};

/** A stored entry as the port gives it: what an older version did not write reads as nothing kept, no reason, no bar. */
function entryOf(stored: StoredEntry): RequestEntry {
  return {
    id: stored.id,
    agentId: stored.agentId,
    at: stored.at,
    protocol: stored.protocol,
    conversationId: stored.conversationId,
    status: stored.status,
    outcome: stored.outcome,
    latencyMs: stored.latencyMs,
    upstreamMs: stored.upstreamMs,
    injected: stored.injected.map(({ reflectionId, relevance, score, why }) => ({ reflectionId, relevance: relevance ?? score ?? 0, why })),
    kept: keptList(stored.kept ?? []),
    rebuilt: rebuiltOf(stored.rebuilt ?? null),
    reason: stored.reason ?? stored.skipped ?? null,
    bar: stored.bar ?? null,
    nearMisses: nearMissList(stored.nearMisses ?? []),
    scope: stored.scope ?? null,
    user: stored.user ?? null,
    answerLimit: stored.answerLimit ?? null,
  };
}
