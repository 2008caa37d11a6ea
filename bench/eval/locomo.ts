/**
 * Retrieval quality on LoCoMo (`../shared/eval/locomo-dev.json` beside the repository, or
 * `ENGRAM_EVAL_LOCOMO`): every observation stored as a reflection (kind factual, topic =
 * speaker) through the reflection writer, one agent per conversation, then every question
 * asked through `recall` (limit 10), the MCP tool's own function, with the reranker when given. A hit at k: any of the
 * first k results comes from one of the question's evidence dialogs. Reports R@5, R@10.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { openSqliteAdapters } from '../../src/adapters/sqlite/index.js';
import { Control } from '../../src/control/control.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../src/domain/types.js';
import { recall } from '../../src/memory/recall.js';
import { createReflectionWriter } from '../../src/memory/reflection-writer.js';
import type { Embedder } from '../../src/ports/index.js';
import type { Reranker } from '../../src/memory/rerank.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { Vault } from '../../src/security/vault.js';

interface LocomoSet {
  conversations: Array<{
    id: string;
    observations: Array<{ text: string; speaker: string; dialog_ids: string[] }>;
    questions: Array<{ question: string; category: number; evidence: string[] }>;
  }>;
}

export interface LocomoResult {
  questions: number;
  observations: number;
  stored: number;
  r5: number;
  r10: number;
  byCategory: Record<string, { n: number; r5: number; r10: number }>;
  recallMs: { p50: number; max: number };
}

const HERE = path.dirname(fileURLToPath(import.meta.url));

export function locomoFile(): string | undefined {
  const candidates = [process.env.ENGRAM_EVAL_LOCOMO, path.resolve(HERE, '../../../shared/eval/locomo-dev.json')];
  return candidates.find((file): file is string => typeof file === 'string' && existsSync(file));
}

export async function evalLocomo(embedder: Embedder, file: string, options: { reranker?: Reranker } = {}): Promise<LocomoResult> {
  const set = JSON.parse(readFileSync(file, 'utf8')) as LocomoSet;
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-locomo-'));
  const adapters = openSqliteAdapters(path.join(dir, 'engram.db'));
  const control = new Control(adapters.control, { vault: new Vault(new SecretBox(randomBytes(32))), now: Date.now });
  const writer = createReflectionWriter({ reflections: adapters.reflections, embedder, control, now: Date.now });
  let hits5 = 0;
  let hits10 = 0;
  let questions = 0;
  let observations = 0;
  let stored = 0;
  const byCategory: LocomoResult['byCategory'] = {};
  const times: number[] = [];
  try {
    const org = await control.createOrg('locomo');
    for (const conversation of set.conversations) {
      const agent = await control.createAgent({
        orgId: org.id,
        name: `conversation-${conversation.id}`,
        upstream: { baseUrl: 'http://127.0.0.1:9', headers: {} },
        memory: DEFAULT_MEMORY_SETTINGS,
        secrets: { upstreamApiKey: 'unused' },
      });
      // Which dialogs each stored reflection came from (a restatement joins the one kept).
      const dialogs = new Map<string, Set<string>>();
      for (const observation of conversation.observations) {
        observations++;
        const result = await writer.write(agent.id, [{ kind: 'factual', content: observation.text, topic: observation.speaker }], 'mcp');
        stored += result.stored.length;
        for (const reflection of result.stored) dialogs.set(reflection.id, new Set(observation.dialog_ids));
        if (result.stored.length === 0) {
          // Dropped as a near-duplicate: credit its dialogs to the neighbour that stands for it.
          const [vector] = await embedder.embed([observation.text]);
          const [nearest] = (await adapters.reflections.nearest(agent.id, { vector, limit: 1 }));
          if (nearest) for (const id of observation.dialog_ids) dialogs.get(nearest.id)?.add(id);
        }
      }
      for (const question of conversation.questions) {
        questions++;
        const started = performance.now();
        const found = await recall({ reflections: adapters.reflections, embedder, reranker: options.reranker }, agent, { query: question.question, limit: 10, visible: {} });
        times.push(performance.now() - started);
        const evidence = new Set(question.evidence);
        const rank = found.findIndex((result) => [...(dialogs.get(result.reflection.id) ?? [])].some((id) => evidence.has(id)));
        const category = (byCategory[String(question.category)] ??= { n: 0, r5: 0, r10: 0 });
        category.n++;
        if (rank >= 0 && rank < 5) {
          hits5++;
          category.r5++;
        }
        if (rank >= 0 && rank < 10) {
          hits10++;
          category.r10++;
        }
      }
    }
  } finally {
    await adapters.close();
    rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  for (const category of Object.values(byCategory)) {
    category.r5 = round(category.r5 / category.n);
    category.r10 = round(category.r10 / category.n);
  }
  return {
    questions,
    observations,
    stored,
    r5: round(hits5 / questions),
    r10: round(hits10 / questions),
    byCategory,
    recallMs: { p50: round(times[Math.floor(times.length / 2)] ?? 0), max: round(times.at(-1) ?? 0) },
  };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
