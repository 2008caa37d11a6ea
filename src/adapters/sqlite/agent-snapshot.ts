/**
 * What a search needs of one agent, kept in memory between requests: the vector matrix
 * and the document frequency of every word (to keep keyword queries within budget).
 * Building one reads and tokenises all of the agent's rows, so this process's own writes
 * patch it in place instead; writes by another connection show as a version it did not
 * expect, and the snapshot is rebuilt.
 */
import { words } from './keyword-query.js';
import { VectorMatrix, type VectorRow } from './vector-matrix.js';

export interface SnapshotRow extends VectorRow {
  content: string;
  topic: string;
  /** JSON string[] as stored. */
  tags: string;
}

/** The text a reflection is keyword-indexed by. */
export function documentText(doc: { content: string; topic: string; tags: readonly string[] }): string {
  return `${doc.content} ${doc.topic} ${doc.tags.join(' ')}`;
}

export type SnapshotChange =
  | { type: 'put'; seq: number; kind: string; vector?: Uint8Array; before?: string; after: string }
  | { type: 'remove'; seq: number; before: string };

export class DocumentFrequencies {
  readonly #counts = new Map<string, number>();

  add(text: string): void {
    for (const word of new Set(words(text))) this.#counts.set(word, (this.#counts.get(word) ?? 0) + 1);
  }

  remove(text: string): void {
    for (const word of new Set(words(text))) {
      const count = (this.#counts.get(word) ?? 0) - 1;
      if (count > 0) this.#counts.set(word, count);
      else this.#counts.delete(word);
    }
  }

  get(term: string): number {
    return this.#counts.get(term) ?? 0;
  }
}

export class AgentSnapshot {
  /** `reflection_tenants.version` this snapshot reflects. */
  version: number;
  readonly matrix: VectorMatrix;
  readonly frequencies = new DocumentFrequencies();

  constructor(rows: readonly SnapshotRow[], version: number) {
    this.version = version;
    this.matrix = new VectorMatrix(rows);
    for (const row of rows) {
      this.frequencies.add(documentText({ ...row, tags: JSON.parse(row.tags) as string[] }));
    }
  }

  /**
   * Applies this process's own committed write, which moved the agent from `version - 1`
   * to `version`. False when the snapshot cannot follow (another writer came between,
   * or the matrix has no room): drop it and build a new one.
   */
  apply(version: number, changes: readonly SnapshotChange[]): boolean {
    if (version !== this.version + 1) return false;
    for (const change of changes) {
      if (change.type === 'remove') {
        this.matrix.remove(change.seq);
        this.frequencies.remove(change.before);
        continue;
      }
      if (!this.matrix.put(change.seq, change.kind, change.vector)) return false;
      if (change.before !== undefined) this.frequencies.remove(change.before);
      this.frequencies.add(change.after);
    }
    this.version = version;
    return true;
  }
}
