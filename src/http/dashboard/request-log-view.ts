/**
 * What the activity page shows of the request log (DESIGN section 12): a page of entries,
 * newest first, and the reflections they name (added, kept, rebuilt, near misses) by id,
 * so each is shown by its text and linked; one deleted since is shown by its id. Kept
 * apart from the page's jobs and dead letters: the two parts change for different reasons.
 * The words are `domain/request-log-words.ts`', the same as `engram requests show`.
 */
import type { Deps } from '../../deps.js';
import * as words from '../../domain/request-log-words.js';
import type { Reflection } from '../../domain/types.js';
import type { RequestEntry, RequestPage } from '../../ports/index.js';

/** Requests shown per page. */
const REQUESTS_PAGE = 25;

export interface RequestLogView {
  requests: RequestPage;
  /** No cursor: the newest page. */
  firstPage: boolean;
  /** The reflections the page's entries name, by id (absent: deleted since). */
  namedReflections: Record<string, Reflection>;
  /** The shared wording, for the template. */
  words: typeof words;
}

/** Every reflection an entry names: what it added, kept, rebuilt (and what replaced those), and its near misses. */
function namedIds(entry: RequestEntry): string[] {
  return [
    ...entry.injected.map((one) => one.reflectionId),
    ...entry.kept.map((one) => one.reflectionId),
    ...(entry.rebuilt?.changes.flatMap((change) => [change.reflectionId, ...(change.replacedBy ? [change.replacedBy] : [])]) ?? []),
    ...entry.nearMisses.map((one) => one.reflectionId),
  ];
}

export async function requestLogView(deps: Pick<Deps, 'control' | 'reflections'>, agentId: string, cursor: string | undefined): Promise<RequestLogView> {
  const requests = await deps.control.requests.list(agentId, { limit: REQUESTS_PAGE, cursor });
  const ids = [...new Set(requests.entries.flatMap(namedIds))];
  const found = await Promise.all(ids.map((id) => deps.reflections.get(agentId, id)));
  const namedReflections = Object.fromEntries(found.flatMap((reflection) => (reflection ? [[reflection.id, reflection]] : [])));
  return { requests, firstPage: cursor === undefined, namedReflections, words };
}
