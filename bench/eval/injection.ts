/**
 * Injection quality, the way a coding agent uses Engram: one team's project memory (an
 * evaluation set: `injection-set.ts`, the calibration set, or `injection-set-pawpath.ts`,
 * written blind and never calibrated on) stored through the reflection writer into a real
 * SQLite store, then each request judged by `createRetrieval(...).judge` as the first
 * user turn of a fresh conversation, with the agent's default memory settings. What
 * injection takes at any `minScore` follows from the judged candidates (`curve.ts`); what
 * `retrieve` really injected at the default is recorded beside, and must agree.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { Control } from '../../src/control/control.js';
import { embeddingText } from '../../src/domain/reflection-text.js';
import { oneLine, truncateEnd } from '../../src/domain/text.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import type { MemorySearchDeps } from '../../src/memory/memory-search.js';
import type { Vocabulary } from '../../src/memory/named-terms.js';
import { createReflectionWriter } from '../../src/memory/reflection-writer.js';
import { createRetrieval } from '../../src/memory/retrieval.js';
import type { Reranker } from '../../src/memory/rerank.js';
import type { Embedder } from '../../src/ports/index.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';
import { injectedAt, pointAt, type JudgedRequest, type Point, type Rule } from './curve.js';

/** An evaluation set's shape (see `injection-set.ts` for how one is written). */
export interface InjectionSet {
  name: string;
  REFLECTIONS: ReadonlyArray<{ id: string; kind: 'factual' | 'procedural'; topic: string; content: string }>;
  NEEDING: ReadonlyArray<{ needs: string; phrasing: 'paraphrase' | 'direct'; text: string }>;
  UNRELATED: ReadonlyArray<{ kind: string; text: string }>;
  /** The tags an extraction model wrote for each reflection, blind to the requests. */
  REFLECTION_TAGS: Readonly<Record<string, readonly string[]>>;
}

export interface InjectionOptions {
  /** The second-stage ranking the proxy runs when word vectors are loaded; absent: fused order. */
  reranker?: Reranker;
  /** The word vectors' vocabulary (named terms); absent: shape and capitals only. */
  vocabulary?: Vocabulary;
  /**
   * Store each reflection with the tags an extraction model wrote for it, as reflections
   * learnt from conversations are stored; without: as stored on purpose with no tags
   * (MCP `remember`, by hand), before the tagging job has run.
   */
  tags?: boolean;
}

export interface JudgedSet {
  set: string;
  embedder: string;
  tagged: boolean;
  /** Reflections the writer stored (the rest it took for restatements of another). */
  stored: number;
  /** Set ids the writer dropped as restating another; requests needing them count the one kept. */
  merged: Array<{ id: string; into: string }>;
  requests: JudgedRequest[];
  /**
   * What `retrieve` injected for each request at the default settings, to check the
   * emulation: requests where `curve.ts` says otherwise. Should be 0.
   */
  drift: number;
  /** Milliseconds per judged request (search and judging). */
  msPerRequest: number;
}

export async function judgeSet(set: InjectionSet, embedder: Embedder, options: InjectionOptions = {}): Promise<JudgedSet> {
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-injection-'));
  const adapters = openSqliteAdapters(path.join(dir, 'engram.db'));
  try {
    const control = new Control(adapters.control, { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
    const writer = createReflectionWriter({ reflections: adapters.reflections, embedder, control, now: Date.now });
    const org = await control.createOrg('eval');
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
    const merged: JudgedSet['merged'] = [];
    for (const reflection of set.REFLECTIONS) {
      const { kind, topic, content } = reflection;
      const tags = options.tags ? [...(set.REFLECTION_TAGS[reflection.id] ?? [])] : [];
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

    const deps: MemorySearchDeps = { reflections: adapters.reflections, embedder, reranker: options.reranker, vocabulary: options.vocabulary };
    const retrieval = createRetrieval(deps);
    const name = (storeId: string) => setIdOf.get(storeId) ?? storeId;
    const rule: Rule = { minCosine: embedder.relevance?.minCosine ?? 0.2, namedBonus: embedder.relevance?.namedBonus ?? 0.1 };
    const requests: JudgedRequest[] = [];
    let drift = 0;
    const started = performance.now();
    const asked = [
      ...set.NEEDING.map((r) => ({ text: r.text, group: r.phrasing as string, needs: name(storeIdOf.get(r.needs) ?? r.needs) })),
      ...set.UNRELATED.map((r) => ({ text: r.text, group: r.kind, needs: undefined })),
    ];
    for (const { text, group, needs } of asked) {
      const judged = await retrieval.judge(agent, text, new Set());
      const request: JudgedRequest = {
        text,
        group,
        ...(needs !== undefined && { needs }),
        candidates: judged.map((j) => ({
          id: name(j.reflection.id),
          kind: j.reflection.kind,
          cosine: j.cosine,
          named: j.named?.weight ?? 0,
          ...(j.named && { term: j.named.term }),
        })),
      };
      requests.push(request);
      const got = (await retrieval.retrieve(agent, text, new Set())).map((j) => name(j.reflection.id));
      const emulated = injectedAt(request, rule, agent.memory.minScore, agent.memory.topK);
      // The budget may leave out one the emulation keeps; never the other way round.
      if (got.some((id) => !emulated.includes(id))) drift++;
    }
    return {
      set: set.name,
      embedder: embedder.id,
      tagged: options.tags === true,
      stored: set.REFLECTIONS.length - merged.length,
      merged,
      requests,
      drift,
      msPerRequest: round((performance.now() - started) / asked.length / 2),
    };
  } finally {
    await adapters.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Summary extends Point {
  /** Share of needing requests whose reflection came first. */
  first: number;
  /** Needing requests that did not get their reflection, and unrelated ones that got any. */
  misses: Array<{ needs: string; request: string; injected: string[]; best?: Candidate }>;
  falsePositives: Array<{ kind: string; request: string; injected: string[]; term?: string }>;
}

type Candidate = JudgedRequest['candidates'][number];

/** What injection does for the set at one `minScore`, with the requests it gets wrong. */
export function summarise(judged: JudgedSet, rule: Rule, minScore: number, topK = DEFAULT_MEMORY_SETTINGS.topK): Summary {
  const point = pointAt(judged.requests, rule, minScore, topK);
  const needing = judged.requests.filter((r) => r.needs !== undefined);
  const misses: Summary['misses'] = [];
  const falsePositives: Summary['falsePositives'] = [];
  let first = 0;
  for (const request of judged.requests) {
    const got = injectedAt(request, rule, minScore, topK);
    if (request.needs === undefined) {
      const top = request.candidates.find((c) => c.id === got[0]);
      if (got.length > 0) falsePositives.push({ kind: request.group, request: shown(request.text), injected: got, ...(top?.term && { term: top.term }) });
      continue;
    }
    if (got[0] === request.needs) first++;
    if (!got.includes(request.needs)) {
      const best = request.candidates.find((c) => c.id === request.needs);
      misses.push({ needs: request.needs, request: shown(request.text), injected: got, ...(best && { best }) });
    }
  }
  return { ...point, first: needing.length === 0 ? 0 : first / needing.length, misses, falsePositives };
}

const shown = (text: string) => truncateEnd(oneLine(text), 120);
const round = (x: number) => Math.round(x * 1000) / 1000;
