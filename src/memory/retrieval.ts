/**
 * Retrieval for injection (DESIGN section 6): which of an agent's reflections belong in
 * the request about to be forwarded. Runs on the proxy's hot path: one embedding, one
 * hybrid search (and a keyword search for the terms the request names, beside it).
 */
import { DEFAULT_MEMORY_SETTINGS, type Agent, type Reflection, type ScoredReflection, type Visibility } from '../domain/types.js';
import { termForms, type TermForms } from './term-forms.js';
import { headAndTail, keywordQuery, withoutNoiseLines } from '../domain/text.js';
import { keywordTerms, remembered } from './keywords.js';
import { subjectTags } from '../domain/reflection-text.js';
import { searchMemory, type MemoryQuery, type MemorySearchDeps } from './memory-search.js';
import { likenessIn, namedQuery, probeTerms, strongestNamedTerm, type NamedQuery, type NamedTerm } from './named-terms.js';
import type { Embedder, RelevanceCalibration } from '../ports/index.js';
import { REFLECTIONS_CLOSE, REFLECTIONS_OPEN, REFLECTIONS_PREAMBLE, reflectionLine, stripEngramBlocks } from './engram-blocks.js';

export { renderReflectionsBlock, stripEngramBlocks } from './engram-blocks.js';

/**
 * A long message is searched for by its first 300 and its last 700 characters, once lines
 * of pasted noise (stack frames, hex) are dropped: the request is usually at one end,
 * around a pasted log, diff or stack trace, which must not drown it (and the embedding
 * costs time in proportion to the text, on every new user turn).
 */
const QUERY_HEAD_CHARS = 300;
const QUERY_TAIL_CHARS = 700;
/** Keyword terms from the opening words of the head, ahead of the tail's latest: the store keeps the first 32. */
const QUERY_HEAD_KEYWORDS = 12;
const MAX_KEYWORDS = 32;
/** Candidates fetched per injected slot: room for the filters below to drop some. */
const CANDIDATE_FACTOR = 3;
const MIN_CANDIDATES = 10;
/** Weight of the vector score in the fusion (0.5: vector and keyword count alike). */
const ALPHA = 0.5;
/** Reflections holding the request's named terms, judged beside the search's best. */
const NAMED_CANDIDATES = 24;
/** Below this strength a shared term is not taken for a name (`named-terms.ts`). */
const NAMED_MIN_STRENGTH = 0.5;
/** Reflections whose terms are kept between requests. */
const TERMS_HELD = 20_000;
/** Searches whose candidates are kept per agent, for the same query asked again at the store's current version. */
const SEARCHES_PER_AGENT = 64;
/** Agents whose searches are kept. */
const AGENTS_HELD = 1_000;
/**
 * Share of the named bonus a name earns alone, with no other word of the request in the
 * reflection (its content, topic or tags): "Summarise Kafka's The Metamorphosis" names
 * Kafka and nothing else the Kafka reflections say; "how do I install deps in quasar?"
 * names quasar and says "install", which the quasar reflection's tags say too.
 */
const UNCORROBORATED_SHARE = 0.5;

/**
 * The `minScore` at which an agent gets its embedder's calibrated rule: the default, and
 * the value every agent had before `minScore` could loosen the rule as well as tighten it.
 */
export const CALIBRATED_MIN_SCORE = DEFAULT_MEMORY_SETTINGS.minScore;

/**
 * Why a reflection is judged relevant to a request: a term the request names lifted it
 * (`named`), or its cosine alone did, with one of its subject tags among the request's
 * words (`tags`: the tags the extraction model gave it brought it) or without (`meaning`).
 */
export type RelevanceWhy = 'meaning' | 'tags' | 'named';

/** One candidate as injection judged it. */
export interface Judged {
  reflection: Reflection;
  /**
   * Its relevance on the scale of `MemorySettings.minScore`: the cosine, plus the named
   * term's bonus, moved so that the embedder's calibrated bar sits at `CALIBRATED_MIN_SCORE`.
   * Injected when at or above the agent's `minScore`: the one relevance scale Engram
   * speaks everywhere (the request log, the dashboard, the CLI, the docs).
   */
  relevance: number;
  /** The cosine of the request and the reflection (content and tags). */
  cosine: number;
  /** `named`: a term the request names lifted it; `tags`, `meaning`: its cosine alone (see `RelevanceWhy`). */
  why: RelevanceWhy;
  /** The subject tag whose words the request holds, if any. */
  tag?: string;
  /**
   * The named term shared with the request, how strongly it names (0..1), whether another
   * word of the request is in the reflection too (`corroborated`), and the share of the
   * named bonus that earns (`weight`: the strength, halved when not corroborated), if any.
   */
  named?: { term: string; strength: number; corroborated: boolean; weight: number };
  /** At or above the agent's `minScore`. */
  relevant: boolean;
}

export interface Retrieval {
  /**
   * Reflections to inject for `query` (the latest user input), best first: at most
   * `agent.memory.topK`, fitting `agent.memory.tokenBudget` once rendered, none whose id
   * is in `exclude` (already injected in this conversation). An empty query gives [].
   * Recording the use (`ReflectionStore.markUsed`) is the caller's job, once it has
   * actually injected them. Only reflections `visible` allows (the conversation's scope
   * and user, DESIGN section 13) are considered; every conversation passes one (absent: all).
   * Once `signal` aborts (the request has gone), the search stops (the query's embedding
   * request is closed) and the promise rejects with its reason: nothing is taken, so
   * nothing is marked used.
   */
  retrieve(agent: Agent, query: string, exclude: ReadonlySet<string>, visible?: Visibility, signal?: AbortSignal): Promise<Judged[]>;
  /** What `retrieve` takes, and when it takes nothing, why, with the candidates that came closest. */
  decide(agent: Agent, query: string, exclude: ReadonlySet<string>, visible?: Visibility, signal?: AbortSignal): Promise<Decision>;
  /**
   * Every candidate the search considers for `query`, judged (relevant or not), best
   * first, before `topK` and the budget: what the dashboard shows and the evaluation
   * sweeps `minScore` over.
   */
  judge(agent: Agent, query: string, exclude: ReadonlySet<string>, visible?: Visibility, signal?: AbortSignal): Promise<Judged[]>;
  /**
   * Every candidate `judge` finds, with whether `retrieve` would take it and, if not, why
   * not: what the dashboard's reflection search shows beside each result. `visible`
   * absent: as a request that may see everything would. `signal`: as `retrieve`'s.
   */
  explain(agent: Agent, query: string, visible?: Visibility, signal?: AbortSignal): Promise<Verdict[]>;
}

/** Why `decide` took nothing (the request log's `reason`, DESIGN section 12). */
export type NothingTaken = 'nothing_to_search' | 'no_candidates' | 'already_held' | 'under_bar' | 'over_budget';

/** What injection takes for a request, and, when it takes nothing, why. */
export interface Decision {
  /** As `retrieve` gives them. */
  taken: Judged[];
  /** Set when `taken` is empty. */
  reason?: NothingTaken;
  /** When `taken` is empty: the best candidates under the bar (at most three), best first. */
  nearMisses: Judged[];
}

/** The candidates of a search for injection, judged, and whether one the conversation holds already would have been relevant. */
interface Searched {
  judged: Judged[];
  heldRelevant(): boolean;
}

/** Near misses a request's log entry shows. */
const NEAR_MISSES = 3;

/** Why nothing of what was found is taken: none fits, the conversation holds the relevant ones, none reaches the bar, none was found. */
function nothingTaken(agent: Agent, found: Searched): NothingTaken {
  const { topK, tokenBudget } = agent.memory;
  if (topK <= 0 || tokenBudget <= 0 || found.judged.some((candidate) => candidate.relevant)) return 'over_budget';
  if (found.heldRelevant()) return 'already_held';
  return found.judged.length > 0 ? 'under_bar' : 'no_candidates';
}

/** Why injection leaves a relevant-looking candidate out. */
export type LeftOut =
  /** Its relevance is under the agent's `minScore`. */
  | 'below_bar'
  /** `topK` better candidates were taken first. */
  | 'beyond_top_k'
  /** Taking it would overflow the block's token budget. */
  | 'over_budget';

/** One candidate as `retrieve` would decide it. */
export type Verdict = { judged: Judged; taken: true } | { judged: Judged; taken: false; reason: LeftOut };

export type RetrievalDeps = MemorySearchDeps;

export function createRetrieval(deps: RetrievalDeps): Retrieval {
  const likeness = likenessIn(deps.vocabulary);
  // A reflection's terms are read again on every search that finds it: keep them, by
  // version (a change of content, topic or tags stamps `updatedAt`).
  const held = remembered(TERMS_HELD, (_key, reflection: Reflection): ReflectionTerms => {
    // Names come from what the reflection says, not from its tags (generic on purpose).
    const searched = `${reflection.content} ${reflection.topic} ${subjectTags(reflection.tags).join(' ')}`;
    const tags = subjectTags(reflection.tags).map((tag) => ({ tag, stems: keywordTerms(tag) })).filter(({ stems }) => stems.length > 0);
    return { forms: termForms(reflection.content), stems: new Set(keywordTerms(searched)), tags };
  });
  const termsOf = (reflection: Reflection) => held(`${reflection.id}@${reflection.updatedAt}`, reflection);

  /**
   * The candidates of a search: those a search of the same query (text, keywords, probes,
   * limits, visibility) found at the store's current version, when one did, else found now.
   * A store without versions, or a search the embedder failed (keywords only), is never
   * reused. The candidates are the same either way: only the store's writes change them.
   */
  const reused = new Map<string, { version: number; searches: Map<string, ScoredReflection[]> }>();
  const candidatesOf = async (agentId: string, query: MemoryQuery): Promise<ScoredReflection[]> => {
    const version = await deps.reflections.version?.(agentId);
    if (version === undefined) return searchMemory(deps, agentId, query);
    let held = reused.get(agentId);
    // Only the current version's searches are kept: an older one's would hold on to reflections the store no longer has.
    if (held?.version !== version) {
      held = { version, searches: new Map() };
      reused.delete(agentId);
      reused.set(agentId, held);
      if (reused.size > AGENTS_HELD) reused.delete(reused.keys().next().value!);
    }
    const key = searchKey(query);
    const found = held.searches.get(key);
    if (found) return found;
    let degraded = false;
    const onDegraded = (error: unknown) => {
      degraded = true;
      deps.onDegraded?.(error);
    };
    const searched = await searchMemory({ ...deps, onDegraded }, agentId, query);
    // Not when a newer version replaced the agent's searches meanwhile.
    if (!degraded && reused.get(agentId) === held) {
      if (held.searches.size >= SEARCHES_PER_AGENT) held.searches.delete(held.searches.keys().next().value!);
      held.searches.set(key, searched);
    }
    return searched;
  };

  /**
   * Every candidate for `query` but those in `exclude`, judged, best first; and whether an
   * excluded one (held by the conversation already) would have been relevant. `undefined`:
   * nothing to search for.
   */
  const search = async (agent: Agent, query: string, exclude: ReadonlySet<string>, visible?: Visibility, signal?: AbortSignal): Promise<Searched | undefined> => {
    const asking = injectionQuery(query);
    if (!asking) return undefined;
    const { topK, tokenBudget } = agent.memory;
    if (topK <= 0 || tokenBudget <= 0) return { judged: [], heldRelevant: () => false };
    const named = namedQuery(asking.text);
    const probes = probeTerms(named, likeness);
    const results = await candidatesOf(agent.id, {
      ...asking,
      limit: injectionSearchLimit(topK) + exclude.size,
      visible,
      also: { keywords: probes.join(' '), limit: NAMED_CANDIDATES + exclude.size },
      // Injection judges by cosine and named terms, not by the reranked order.
      rerank: false,
      signal,
    });
    // A search reused from before, or one that ended as the request left: nothing is taken for a request that has gone.
    signal?.throwIfAborted();
    const candidates = results.filter((result) => !exclude.has(result.reflection.id));
    const holders = holdersAmong(named, candidates.map((result) => termsOf(result.reflection).forms));
    // The request's keyword stems: its word forms are keyed by them.
    const asked: ReadonlySet<string> = new Set(named.forms.words.keys());
    const rule = relevanceRule(deps.embedder, agent.memory.minScore);
    const judgeResult = (result: ScoredReflection) => {
      const terms = termsOf(result.reflection);
      const term = strongestNamedTerm(named, terms.forms, holders, likeness);
      // A subject tag whose every word the request holds.
      const tag = terms.tags.find(({ stems }) => stems.every((stem) => asked.has(stem)))?.tag;
      return judgeOne(result, term && { ...term, corroborated: corroborates(asked, term.term, terms.stems) }, rule, tag);
    };
    return {
      judged: rank(candidates.map(judgeResult)),
      // Asked only when nothing else is relevant: why the turn got nothing.
      heldRelevant: () => results.some((result) => exclude.has(result.reflection.id) && judgeResult(result).relevant),
    };
  };

  const judge = async (agent: Agent, query: string, exclude: ReadonlySet<string>, visible?: Visibility, signal?: AbortSignal): Promise<Judged[]> =>
    (await search(agent, query, exclude, visible, signal))?.judged ?? [];

  /** What `retrieve` takes of `judged` (best first): the relevant ones, up to `topK`, within the budget. */
  const taken = (agent: Agent, judged: Judged[]): Judged[] =>
    fitBudget(judged.filter((candidate) => candidate.relevant).slice(0, agent.memory.topK), agent.memory.tokenBudget);

  return {
    judge,
    async retrieve(agent, query, exclude, visible, signal) {
      return taken(agent, await judge(agent, query, exclude, visible, signal));
    },
    async decide(agent, query, exclude, visible, signal) {
      const found = await search(agent, query, exclude, visible, signal);
      if (!found) return { taken: [], reason: 'nothing_to_search', nearMisses: [] };
      const chosen = taken(agent, found.judged);
      if (chosen.length > 0) return { taken: chosen, nearMisses: [] };
      const nearMisses = found.judged.filter((candidate) => !candidate.relevant).slice(0, NEAR_MISSES);
      return { taken: chosen, reason: nothingTaken(agent, found), nearMisses };
    },
    async explain(agent, query, visible, signal) {
      const judged = await judge(agent, query, new Set(), visible, signal);
      const chosen = new Set(taken(agent, judged));
      const relevant = judged.filter((candidate) => candidate.relevant);
      return judged.map((candidate): Verdict => {
        if (chosen.has(candidate)) return { judged: candidate, taken: true };
        const reason: LeftOut = !candidate.relevant ? 'below_bar' : relevant.indexOf(candidate) >= agent.memory.topK ? 'beyond_top_k' : 'over_budget';
        return { judged: candidate, taken: false, reason };
      });
    },
  };
}

/** A reflection's terms: what it names, and every word it is searched by. */
interface ReflectionTerms {
  forms: TermForms;
  /** Keyword stems of its content, topic and subject tags. */
  stems: ReadonlySet<string>;
  /** Its subject tags, each with its keyword stems. */
  tags: ReadonlyArray<{ tag: string; stems: string[] }>;
}

/** Another word of the request than the named term's own is in the reflection too. */
function corroborates(asked: ReadonlySet<string>, term: string, stems: ReadonlySet<string>): boolean {
  const own = new Set(keywordTerms(term));
  for (const word of asked) if (!own.has(word) && stems.has(word)) return true;
  return false;
}

/**
 * How many of the candidates hold each word (by stem): the agent's reflections that hold
 * a term the request names are all among them (the named-term search fetched them), so
 * this is how rare the term is among the agent's reflections, up to that search's limit.
 */
function holdersAmong(query: NamedQuery, forms: readonly TermForms[]): (stem: string) => number {
  const counts = new Map<string, number>();
  // Only the request's own words are ever asked about.
  for (const key of query.forms.words.keys()) counts.set(key, forms.filter(({ words }) => words.has(key)).length);
  return (key) => counts.get(key) ?? 0;
}

/**
 * The rule that keeps unrelated memories out of a request, on the cosine's absolute
 * scale (fused and keyword scores are relative to the result set: the best of a bad lot
 * still scores 1). A reflection is relevant when its cosine, plus `namedBonus` times the
 * strength of a named term it shares with the request, reaches the bar: the embedder's
 * calibrated cosine (`Embedder.relevance`, from the injection evaluation), moved by the
 * agent's `minScore` away from `CALIBRATED_MIN_SCORE` (higher: stricter; lower: looser).
 * A named term ("quasar", `billing-svc`, "Sentry") lowers the bar for the reflections
 * naming it, more the more specific it is, and half as much when nothing else of the
 * request is in the reflection; words shared by chance ("install", "tests") are not names
 * and lower nothing.
 */
function judgeOne(result: ScoredReflection, named: (NamedTerm & { corroborated: boolean }) | undefined, rule: RelevanceRule, tag: string | undefined): Judged {
  const strength = named && named.strength >= NAMED_MIN_STRENGTH ? named.strength : 0;
  const cosine = result.vectorScore;
  const weight = strength * (named?.corroborated ? 1 : UNCORROBORATED_SHARE);
  const relevance = cosine + rule.namedBonus * weight - rule.offset;
  const meaningAlone = cosine - rule.offset >= rule.minScore;
  return {
    reflection: result.reflection,
    relevance,
    cosine,
    why: strength > 0 && !meaningAlone ? 'named' : tag !== undefined ? 'tags' : 'meaning',
    ...(tag !== undefined ? { tag } : {}),
    ...(strength > 0 && named ? { named: { ...named, strength, weight } } : {}),
    relevant: relevance >= rule.minScore,
  };
}

export interface RelevanceRule {
  /** The agent's `minScore`: the bar on the `Judged.relevance` scale. */
  minScore: number;
  /** Subtracted from a cosine to put it on that scale (the calibrated cosine minus `CALIBRATED_MIN_SCORE`). */
  offset: number;
  /** Added, times a named term's strength, to the cosine of a reflection naming it. */
  namedBonus: number;
}

/** The rule for an agent: the embedder's calibration, moved by the agent's `minScore`. */
export function relevanceRule(embedder: Pick<Embedder, 'relevance'>, minScore: number): RelevanceRule {
  const calibrated = embedder.relevance ?? UNCALIBRATED;
  return { minScore, offset: calibrated.minCosine - CALIBRATED_MIN_SCORE, namedBonus: calibrated.namedBonus };
}

/**
 * An embedder without a calibration (an endpoint's model): `minScore` is the cosine bar
 * itself, as it always was, and a named term lifts a cosine by what it does for the
 * calibrated embedders.
 */
const UNCALIBRATED: RelevanceCalibration = { minCosine: CALIBRATED_MIN_SCORE, keywordFraction: 0.75, namedBonus: 0.1 };

/**
 * The search injection runs for a user message, without its limit: Engram's own blocks
 * and pasted noise lines dropped, the head and the tail of a long message (see above).
 * Undefined when nothing is left to search for.
 */
export function injectionQuery(message: string): Omit<MemoryQuery, 'limit'> | undefined {
  return headTailQuery(stripEngramBlocks(message), { head: QUERY_HEAD_CHARS, tail: QUERY_TAIL_CHARS, headKeywords: QUERY_HEAD_KEYWORDS });
}

/**
 * The search for `said` by its head and tail, once pasted noise lines are dropped: keyword
 * terms from the opening words of the head first, then the tail's latest, `MAX_KEYWORDS`
 * in all. Undefined when nothing is left to search for.
 */
export function headTailQuery(said: string, window: { head: number; tail: number; headKeywords: number }): Omit<MemoryQuery, 'limit'> | undefined {
  const { head, tail } = headAndTail(withoutNoiseLines(said), window.head, window.tail);
  const text = `${head}\n${tail}`.trim();
  if (text === '') return undefined;
  // A query that fits whole is all `tail`: its opening words still come first (a turn's query opens with what the user asked).
  const keywords = new Set([...terms(keywordQuery(head || tail, window.headKeywords, 'earliest')), ...terms(keywordQuery(tail))]);
  return { text, keywords: [...keywords].slice(0, MAX_KEYWORDS).join(' '), alpha: ALPHA };
}

/** Everything a search's candidates depend on besides the agent, the store's version and the embedder (one per process). */
function searchKey(query: MemoryQuery): string {
  const visible = query.visible === undefined ? '*' : JSON.stringify([query.visible.scope ?? null, query.visible.user ?? null]);
  const also = query.also ? `${query.also.limit}\u0001${query.also.keywords}` : '';
  return [visible, query.limit, query.kind ?? '', query.alpha, query.rerank ?? '', also, query.keywords, query.text].join('\u0000');
}

/** Candidates fetched for `topK` injected reflections: room for the relevance rule to drop some. */
export function injectionSearchLimit(topK: number): number {
  return Math.max(topK * CANDIDATE_FACTOR, MIN_CANDIDATES);
}

const terms = (query: string): string[] => (query === '' ? [] : query.split(' '));

/**
 * The looser rule of an explicit search (`recall`, where the model asked): any keyword
 * match, exact or by meaning (the reranker's word matching), or a cosine within reach of
 * the injection rule's. The caller ranks them.
 */
export function isRelated(result: ScoredReflection, embedder: Pick<Embedder, 'relevance'>, minScore: number): boolean {
  return result.keywordScore > 0 || (result.matchScore ?? 0) > 0 || result.vectorScore >= relatedCosine(embedder, minScore);
}

/** The cosine at which `isRelated` takes a reflection by meaning alone: within reach of the injection rule's bar. */
export function relatedCosine(embedder: Pick<Embedder, 'relevance'>, minScore: number): number {
  const calibrated = embedder.relevance ?? UNCALIBRATED;
  return (calibrated.minCosine + (minScore - CALIBRATED_MIN_SCORE)) * calibrated.keywordFraction;
}

/** Most relevant first; among equals procedural first (it prevents mistakes), then id. */
function rank(judged: Judged[]): Judged[] {
  const procedural = (j: Judged) => (j.reflection.kind === 'procedural' ? 0 : 1);
  return judged.sort(
    (a, b) =>
      b.relevance - a.relevance ||
      procedural(a) - procedural(b) ||
      (a.reflection.id < b.reflection.id ? -1 : a.reflection.id > b.reflection.id ? 1 : 0),
  );
}

/**
 * Keeps results, in order, while the rendered block stays within `budget` estimated
 * tokens (chars / 4); one that does not fit is skipped and a shorter later one may still.
 */
function fitBudget(results: Judged[], budget: number): Judged[] {
  const maxChars = budget * 4;
  // Frame: open tag, preamble, close tag, and the newlines between them.
  let used = REFLECTIONS_OPEN.length + REFLECTIONS_PREAMBLE.length + REFLECTIONS_CLOSE.length + 2;
  const out: Judged[] = [];
  for (const result of results) {
    const cost = reflectionLine(result.reflection).length + 1;
    if (used + cost > maxChars) continue;
    used += cost;
    out.push(result);
  }
  return out;
}

