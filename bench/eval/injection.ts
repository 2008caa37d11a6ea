/**
 * Injection quality, the way a coding agent uses Engram: one team's project memory
 * (`injection-set.ts`) stored through the reflection writer into a real SQLite store, then
 * each request sent to `createRetrieval(...).retrieve` as the first user turn of a fresh
 * conversation, with the agent's default memory settings. Reports whether the reflection a
 * request needs is injected (and first), whether unrelated requests get anything, and, per
 * request, the raw search candidates before `isRelevant` (hybrid search, then the reranker
 * when one is given, as the proxy runs it), to calibrate that rule.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { Control } from '../../src/control/control.js';
import { embeddingText } from '../../src/domain/reflection-text.js';
import { oneLine, truncateEnd } from '../../src/domain/text.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type ScoredReflection } from '../../src/domain/types.js';
import { FUSION_CANDIDATES } from '../../src/memory/hybrid-search.js';
import { searchMemory, type MemorySearchDeps } from '../../src/memory/memory-search.js';
import { createReflectionWriter } from '../../src/memory/reflection-writer.js';
import { createRetrieval, injectionQuery, injectionSearchLimit, isRelevant, relevanceRule } from '../../src/memory/retrieval.js';
import type { Reranker } from '../../src/memory/rerank.js';
import type { Embedder } from '../../src/ports/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { NEEDING, REFLECTION_TAGS, REFLECTIONS, UNRELATED, type NeedingRequest, type UnrelatedKind } from './injection-set.js';

/** One hybrid-search result for a request, named by its id in the set. */
export interface Candidate {
  id: string;
  score: number;
  vectorScore: number;
  keywordScore: number;
  /** The reranker's soft word-match score; absent without a reranker. */
  matchScore?: number;
  /** What `isRelevant` says of it with the agent's `minScore`. */
  relevant: boolean;
  /**
   * Within the results `retrieve` asks for (its search limit). The rest are listed for
   * calibration: their scores are the same, the fusion's population being unchanged.
   */
  considered: boolean;
}

export interface RequestCandidates {
  request: string;
  /** The reflection the request needs (the one it merged into, if the writer merged it); absent for an unrelated request. */
  needs?: string;
  group: NeedingRequest['phrasing'] | UnrelatedKind;
  /** What `retrieve` injected, best first. */
  injected: string[];
  /** The search `retrieve` runs, before `isRelevant`, best first, extended to every stored reflection. */
  results: Candidate[];
}

export interface Miss {
  needs: string;
  request: string;
  injected: string[];
  /** Where the needed reflection stood among the raw candidates (0: first; absent: not found at all). */
  needed?: Candidate & { rank: number };
}

export interface FalsePositive {
  kind: UnrelatedKind;
  request: string;
  injected: string[];
}

export interface InjectionOptions {
  /** The second-stage ranking the proxy runs when word vectors are loaded; absent: fused order. */
  reranker?: Reranker;
  /**
   * Store each reflection with the tags an extraction model wrote for it (`REFLECTION_TAGS`),
   * as reflections learnt from conversations are stored; without: as stored on purpose
   * with no tags (MCP `remember`, by hand).
   */
  tags?: boolean;
}

export interface InjectionResult {
  embedder: string;
  reranked: boolean;
  tagged: boolean;
  /** Reflections in the set, and how many the writer stored (the rest it took for restatements). */
  reflections: number;
  stored: number;
  /** Set ids the writer dropped as restating another; requests needing them count the one kept. */
  merged: Array<{ id: string; into: string }>;
  needing: number;
  unrelated: number;
  /** Share of needing requests whose reflection was injected. */
  neededHit: number;
  /** Share of needing requests whose reflection was injected first. */
  neededTop1: number;
  /** Share of unrelated requests that got any reflection. */
  unrelatedAny: number;
  meanInjectedNeeding: number;
  meanInjectedUnrelated: number;
  byPhrasing: Record<NeedingRequest['phrasing'], { n: number; hit: number; top1: number }>;
  byUnrelatedKind: Record<UnrelatedKind, { n: number; any: number }>;
  misses: Miss[];
  falsePositives: FalsePositive[];
  /**
   * Requests where `retrieve` injected a reflection that the reproduced query's candidates
   * do not hold as relevant: `retrievalQuery` below no longer matches `retrieval.ts`, and
   * `candidates` no longer describe the decision. Should be 0.
   */
  queryDrift: number;
  candidates: RequestCandidates[];
}

/** Request text in the lists of misses and false positives. */
const SHOWN_CHARS = 120;

export async function evalInjection(embedder: Embedder, options: InjectionOptions = {}): Promise<InjectionResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-injection-'));
  const adapters = openSqliteAdapters(path.join(dir, 'engram.db'));
  try {
    const control = new Control(adapters.control, { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
    const writer = createReflectionWriter({ reflections: adapters.reflections, embedder, control, now: Date.now });
    const org = await control.createOrg('tidewater');
    const agent = await control.createAgent({
      orgId: org.id,
      name: 'coding-agent',
      upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} },
      memory: DEFAULT_MEMORY_SETTINGS,
      secrets: { upstreamApiKey: 'unused' },
    });

    // Set id -> store id, and back; a reflection the writer merged maps to the one kept.
    const storeIdOf = new Map<string, string>();
    const setIdOf = new Map<string, string>();
    const merged: InjectionResult['merged'] = [];
    for (const reflection of REFLECTIONS) {
      const { kind, topic, content } = reflection;
      const tags = options.tags ? [...(REFLECTION_TAGS[reflection.id] ?? [])] : [];
      const { stored } = await writer.write(agent.id, [{ kind, topic, content, tags }], options.tags ? 'conversation' : 'mcp');
      if (stored[0]) {
        storeIdOf.set(reflection.id, stored[0].id);
        setIdOf.set(stored[0].id, reflection.id);
        continue;
      }
      const [vector] = await embedder.embed([embeddingText({ content, tags })]);
      const [nearest] = await adapters.reflections.nearest(agent.id, { vector, limit: 1 });
      if (!nearest) throw new Error(`reflection ${reflection.id} was neither stored nor merged`);
      storeIdOf.set(reflection.id, nearest.id);
      merged.push({ id: reflection.id, into: setIdOf.get(nearest.id) ?? nearest.id });
    }

    const deps: MemorySearchDeps = { reflections: adapters.reflections, embedder, reranker: options.reranker };
    const retrieval = createRetrieval(deps);
    const name = (storeId: string) => setIdOf.get(storeId) ?? storeId;
    const run = async (request: string) => {
      const injected = (await retrieval.retrieve(agent, request, new Set())).map((r) => name(r.id));
      const { considered, rest } = await rawCandidates(deps, agent, request);
      const candidate = (considered: boolean) => (r: ScoredReflection) => ({
        id: name(r.reflection.id),
        // Unrounded: a calibration compares them with thresholds, as `isRelevant` does.
        score: r.score,
        vectorScore: r.vectorScore,
        keywordScore: r.keywordScore,
        ...(r.matchScore !== undefined && { matchScore: r.matchScore }),
        relevant: isRelevant(r, relevanceRule(embedder, agent.memory.minScore)),
        considered,
      });
      const results = [...considered.map(candidate(true)), ...rest.map(candidate(false))];
      const relevant = new Set(results.filter((r) => r.relevant && r.considered).map((r) => r.id));
      return { injected, results, drifted: injected.some((id) => !relevant.has(id)) };
    };

    const candidates: RequestCandidates[] = [];
    const misses: Miss[] = [];
    const falsePositives: FalsePositive[] = [];
    const byPhrasing: InjectionResult['byPhrasing'] = { paraphrase: { n: 0, hit: 0, top1: 0 }, direct: { n: 0, hit: 0, top1: 0 } };
    const byUnrelatedKind = {} as InjectionResult['byUnrelatedKind'];
    let hits = 0;
    let top1 = 0;
    let injectedNeeding = 0;
    let withAny = 0;
    let injectedUnrelated = 0;
    let queryDrift = 0;

    for (const request of NEEDING) {
      const { injected, results, drifted } = await run(request.text);
      // The needed reflection under the name it is stored as (itself, or the one it merged into).
      const needed = name(storeIdOf.get(request.needs) ?? request.needs);
      candidates.push({ request: request.text, needs: needed, group: request.phrasing, injected, results });
      if (drifted) queryDrift++;
      const group = byPhrasing[request.phrasing];
      group.n++;
      injectedNeeding += injected.length;
      if (injected.includes(needed)) {
        hits++;
        group.hit++;
      } else {
        const rank = results.findIndex((r) => r.id === needed);
        misses.push({ needs: request.needs, request: shown(request.text), injected, ...(rank >= 0 && { needed: { ...results[rank], rank } }) });
      }
      if (injected[0] === needed) {
        top1++;
        group.top1++;
      }
    }

    for (const request of UNRELATED) {
      const { injected, results, drifted } = await run(request.text);
      candidates.push({ request: request.text, group: request.kind, injected, results });
      if (drifted) queryDrift++;
      const group = (byUnrelatedKind[request.kind] ??= { n: 0, any: 0 });
      group.n++;
      injectedUnrelated += injected.length;
      if (injected.length > 0) {
        withAny++;
        group.any++;
        falsePositives.push({ kind: request.kind, request: shown(request.text), injected });
      }
    }

    for (const group of Object.values(byPhrasing)) {
      group.hit = share(group.hit, group.n);
      group.top1 = share(group.top1, group.n);
    }
    for (const group of Object.values(byUnrelatedKind)) group.any = share(group.any, group.n);
    return {
      embedder: embedder.id,
      reranked: options.reranker !== undefined,
      tagged: options.tags === true,
      reflections: REFLECTIONS.length,
      stored: REFLECTIONS.length - merged.length,
      merged,
      needing: NEEDING.length,
      unrelated: UNRELATED.length,
      neededHit: share(hits, NEEDING.length),
      neededTop1: share(top1, NEEDING.length),
      unrelatedAny: share(withAny, UNRELATED.length),
      meanInjectedNeeding: share(injectedNeeding, NEEDING.length),
      meanInjectedUnrelated: share(injectedUnrelated, UNRELATED.length),
      byPhrasing,
      byUnrelatedKind,
      misses,
      falsePositives,
      queryDrift,
      candidates,
    };
  } finally {
    await adapters.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The search whose results `retrieve` filters with `isRelevant`, for a first turn
 * (nothing excluded): `considered` is exactly what it gets back; `rest` the other
 * reflections, scored by the same search asked for all of them, for calibration. Their
 * scores are comparable: the fusion normalises over `FUSION_CANDIDATES` from each list
 * whatever the limit, and the reranker scores each result on its own.
 */
async function rawCandidates(
  deps: MemorySearchDeps,
  agent: Agent,
  request: string,
): Promise<{ considered: ScoredReflection[]; rest: ScoredReflection[] }> {
  const query = injectionQuery(request);
  if (!query) return { considered: [], rest: [] };
  const considered = await searchMemory(deps, agent.id, { ...query, limit: injectionSearchLimit(agent.memory.topK) });
  const seen = new Set(considered.map((r) => r.reflection.id));
  const all = await searchMemory(deps, agent.id, { ...query, limit: Math.min(REFLECTIONS.length, FUSION_CANDIDATES) });
  return { considered, rest: all.filter((r) => !seen.has(r.reflection.id)) };
}

const shown = (text: string) => truncateEnd(oneLine(text), SHOWN_CHARS);
const share = (count: number, n: number) => (n === 0 ? 0 : round(count / n));
const round = (x: number) => Math.round(x * 1000) / 1000;
