/**
 * What an extraction call is shown of the agent's memory (DESIGN section 5): the few
 * current reflections most related to the transcript chunk, each with its id, so the
 * model can leave alone what is already known and name, in `supersedes`, what the
 * transcript shows to have changed. Only the ids shown here may be superseded (the
 * writer's `supersedable`): an id the model invents, or one a turn quotes, is ignored.
 * How they are shown is `extraction-frame.ts`.
 */
import type { Agent, Reflection, Visibility } from '../domain/types.js';
import type { Turn } from '../domain/transcript.js';
import { keywordTerms } from './keywords.js';
import { subjectTags } from '../domain/reflection-text.js';
import { searchMemory, type MemorySearchDeps } from './memory-search.js';
import { headTailQuery, relatedCosine } from './retrieval.js';

/** Reflections shown at most: enough for the few a chunk can change, few enough to cost little. */
export const MAX_EXISTING = 8;
/**
 * The chunk is searched by the first and last characters of its user's and assistant's
 * words (tool output left out: it is long, noisy, and never by itself a reason to
 * supersede). Wider than injection's window: this runs once per extraction call, off the
 * request path, over a whole chunk of conversation rather than one message.
 */
const QUERY_HEAD_CHARS = 1500;
const QUERY_TAIL_CHARS = 2500;
const QUERY_HEAD_KEYWORDS = 16;
/** Candidates per reflection shown: room for the relation check to drop some. */
const CANDIDATE_FACTOR = 3;

/**
 * The agent's current reflections most related to `turns`, best first, at most `limit`:
 * the hybrid search that `recall` runs, kept to those that share a keyword with the
 * query (in their content, topic or tags) or whose cosine reaches `recall`'s bar by
 * meaning alone (`relatedCosine`). Stricter than `recall`'s `isRelated`, which also takes
 * any word matched by meaning: over a whole chunk of conversation some word always is,
 * and this list should hold what the chunk is about, not whatever ranks first. Superseded
 * reflections are never found, nor any the conversation may not see (`visible`: its
 * scope and user). No user or assistant text: none.
 */
export async function relatedReflections(
  deps: MemorySearchDeps,
  agent: Agent,
  turns: readonly Turn[],
  visible: Visibility,
  limit = MAX_EXISTING,
): Promise<Reflection[]> {
  const said = turns.flatMap((turn) => (turn.role === 'tool' || turn.text.trim() === '' ? [] : [turn.text.trim()])).join('\n');
  const query = headTailQuery(said, { head: QUERY_HEAD_CHARS, tail: QUERY_TAIL_CHARS, headKeywords: QUERY_HEAD_KEYWORDS });
  if (!query || limit <= 0) return [];
  const found = await searchMemory(deps, agent.id, { ...query, limit: limit * CANDIDATE_FACTOR, visible });
  const asked = new Set(keywordTerms(query.keywords));
  const bar = relatedCosine(deps.embedder, agent.memory.minScore);
  return found
    .filter((result) => sharesTerm(result.reflection, asked) || result.vectorScore >= bar)
    .slice(0, limit)
    .map((result) => result.reflection);
}

/** The reflection holds one of the query's keyword terms, where the keyword search looks. */
function sharesTerm(reflection: Reflection, asked: ReadonlySet<string>): boolean {
  return keywordTerms(`${reflection.content} ${reflection.topic} ${subjectTags(reflection.tags).join(' ')}`).some((term) => asked.has(term));
}
