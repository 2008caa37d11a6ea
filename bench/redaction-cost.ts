/**
 * What redaction costs per MB of realistic agent text, now and at an earlier revision, on
 * the same text in the same process; and how many markers each leaves in the clean corpus
 * (test/fixtures/secrets/benign), which must not grow.
 *
 * The text is `agentText` (the clean corpus with a secret in a tool output every ~4 KB),
 * about 1 MB, redacted two ways: whole, and in 48 KB pieces, the size a final answer's
 * transcript is cut to before extraction.
 *
 * `node --import tsx bench/redaction-cost.ts [--before <git revision>] [--runs N]`
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { redactSecrets } from '../src/redaction/redact.js';
import { benignTexts } from '../test/fixtures/secrets/corpus.js';
import { agentText, falsePositives, redactionAt, type Redact } from './redaction.js';
import { summarise } from './stats.js';

const MB = 1024 * 1024;
const PIECE = 48 * 1024;

export interface CostResult {
  bytes: number;
  /** Median ms per MB, redacting the text whole and in 48 KB pieces. */
  wholeMsPerMB: number;
  piecesMsPerMB: number;
  /** Markers left in the clean corpus, and lines of it changed. */
  benignMarkers: number;
  benignLinesChanged: number;
}

function median(run: () => void, runs: number): number {
  run(); // warm-up: compile the patterns, load the rules
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  return summarise(samples).p50;
}

export function cost(redact: Redact, text: string, runs: number): CostResult {
  const bytes = Buffer.byteLength(text);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += PIECE) pieces.push(text.slice(i, i + PIECE));
  const whole = median(() => redact(text), runs);
  const split = median(() => pieces.forEach((piece) => redact(piece)), runs);
  let markers = 0;
  for (const { text: benign } of benignTexts()) markers += (redact(benign).match(/\[REDACTED:[a-z_]+\]/g) ?? []).length;
  return {
    bytes,
    wholeMsPerMB: (whole * MB) / bytes,
    piecesMsPerMB: (split * MB) / bytes,
    benignMarkers: markers,
    benignLinesChanged: falsePositives(redact),
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const option = (name: string) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : undefined;
  };
  const runs = Number(option('--runs') ?? 15);
  const text = agentText(MB);
  const show = (label: string, r: CostResult) =>
    console.log(
      `${label}: ${r.wholeMsPerMB.toFixed(1)} ms/MB whole, ${r.piecesMsPerMB.toFixed(1)} ms/MB in 48 KB pieces; ` +
        `clean corpus: ${r.benignMarkers} markers, ${r.benignLinesChanged} lines changed`,
    );
  console.log(`${(Buffer.byteLength(text) / MB).toFixed(2)} MB of agent text, median of ${runs} runs`);
  const revision = option('--before');
  if (revision) {
    const old = await redactionAt(revision);
    if (!old) throw new Error(`cannot load redact.ts at ${revision}`);
    show(`before (${revision})`, cost(old, text, runs));
  }
  show('now', cost(redactSecrets, text, runs));
}
