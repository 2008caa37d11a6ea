/**
 * What secret redaction costs (issue 15): `redactSecrets` on 48 KB of realistic agent
 * text (git, npm, stack traces, JSON logs, diffs, checksums, with a secret every few KB,
 * from test/fixtures/secrets), p50 and p95 in this process, beside the same text through
 * the implementation of an earlier revision (by default the last one before the
 * maintained ruleset); and the slowest of the 1 MB adversarial lines.
 *
 * Alone: `node --import tsx bench/redaction.ts [--before <git revision>] [--quick]`.
 * `npm run bench` runs it as one phase.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { redactSecrets } from '../src/redaction/redact.js';
import { CONTEXTS, SAMPLES, benignTexts } from '../test/fixtures/secrets/corpus.js';
import { summarise, type Summary } from './stats.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The last revision before the maintained ruleset, the entropy check and the corpus. */
export const BEFORE_RULESET = 'abd29a0';

export type Redact = (text: string) => string;

export interface RedactionBenchResult {
  bytes: number;
  iterations: number;
  current: Summary;
  /** The same text through `redactSecrets` as it was at `revision`. */
  before?: Summary & { revision: string };
  /** The slowest 1 MB adversarial line, ms. */
  adversarialMaxMs: number;
  adversarialWorst: string;
  /** Lines of the clean corpus (test/fixtures/secrets/benign) the redaction changes: false positives, now and at `before.revision`. */
  falsePositives: { current: number; before?: number };
}

/**
 * `redactSecrets` as it was at `revision`: `src/redaction/` (which imports only itself and
 * domain) and `src/domain/`, read with git into a temporary folder and imported from there.
 * Before the scanner had its own folder it was `src/domain/redact*.ts` with its rule data
 * beside it (`secret-rules/`), so a copy of `src/domain/` holds it all. Undefined where git
 * or the revision is missing.
 */
export async function redactionAt(revision: string): Promise<Redact | undefined> {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: path.join(HERE, '..'), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const files = git('ls-tree', '-r', '--name-only', revision, 'src/domain/', 'src/redaction/').split('\n').filter(Boolean);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-redact-'));
    for (const file of files) {
      const target = path.join(dir, file);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, git('show', `${revision}:${file}`));
    }
    // Its imports of packages resolve from this checkout's node_modules.
    fs.symlinkSync(path.join(HERE, '..', 'node_modules'), path.join(dir, 'node_modules'));
    const entry = files.includes('src/redaction/redact.ts') ? 'src/redaction/redact.ts' : 'src/domain/redact.ts';
    const module = (await import(pathToFileURL(path.join(dir, entry)).href)) as { redactSecrets: Redact; loadRedaction?: () => void };
    module.loadRedaction?.();
    return module.redactSecrets;
  } catch {
    return undefined;
  }
}

/** About `bytes` of agent text: the benign corpus over and over, a secret in a tool output every ~4 KB. */
export function agentText(bytes = 48 * 1024): string {
  const benign = benignTexts().map(({ text }) => text);
  let text = '';
  for (let i = 0; text.length < bytes; i++) {
    text += benign[i % benign.length];
    if (i % 2 === 1) text += `\n${CONTEXTS.tool_output(SAMPLES[(i * 7) % SAMPLES.length].snippet)}\n`;
  }
  return text.slice(0, bytes);
}

function time(redact: Redact, text: string, iterations: number): Summary {
  for (let i = 0; i < Math.min(50, iterations); i++) redact(text);
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const started = performance.now();
    redact(text);
    samples.push(performance.now() - started);
  }
  return summarise(samples);
}

const MB = 1024 * 1024;
const ADVERSARIAL = ['a', 'Ab3+/Zq9', 'xoxb-12-', '-----BEGIN RSA PRIVATE KEY-----', 'https://a:', 'password token key secret ', 'sk-', 'AccountKey=', 'mongodb://a:b@', 'mysql -p', '--password ', 'curl -u a:'];

/** Lines of the clean corpus that `redact` changes. */
export function falsePositives(redact: Redact): number {
  let count = 0;
  for (const { text } of benignTexts()) {
    const before = text.split('\n');
    count += redact(text)
      .split('\n')
      .filter((line, i) => line !== before[i]).length;
  }
  return count;
}

export async function redactionBench(options: { iterations?: number; before?: string | false } = {}): Promise<RedactionBenchResult> {
  const iterations = options.iterations ?? 500;
  const text = agentText();
  const current = time(redactSecrets, text, iterations);
  const revision = options.before === false ? undefined : (options.before ?? BEFORE_RULESET);
  const old = revision ? await redactionAt(revision) : undefined;
  let adversarialMaxMs = 0;
  let adversarialWorst = '';
  for (const unit of ADVERSARIAL) {
    const line = unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
    const started = performance.now();
    redactSecrets(line);
    const ms = performance.now() - started;
    if (ms > adversarialMaxMs) [adversarialMaxMs, adversarialWorst] = [ms, unit];
  }
  return {
    bytes: Buffer.byteLength(text),
    iterations,
    current,
    ...(old && revision ? { before: { ...time(old, text, iterations), revision } } : {}),
    adversarialMaxMs,
    adversarialWorst,
    falsePositives: { current: falsePositives(redactSecrets), ...(old ? { before: falsePositives(old) } : {}) },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const at = process.argv.indexOf('--before');
  const result = await redactionBench({
    iterations: process.argv.includes('--quick') ? 50 : 500,
    before: at > 0 ? process.argv[at + 1] : undefined,
  });
  const perMB = (ms: number) => ((ms * MB) / result.bytes).toFixed(2);
  const f = (s: Summary) => `p50 ${s.p50.toFixed(3)} ms, p95 ${s.p95.toFixed(3)} ms (n=${s.n}); ${perMB(s.p50)} ms per MB at p50`;
  console.log(`redactSecrets on ${result.bytes} bytes of agent text`);
  if (result.before) console.log(`  before (${result.before.revision}): ${f(result.before)}`);
  console.log(`  now: ${f(result.current)}`);
  const fp = result.falsePositives;
  console.log(`  lines of the clean corpus changed (false positives): now ${fp.current}${fp.before === undefined ? '' : `, before ${fp.before}`}`);
  console.log(`  slowest 1 MB adversarial line: ${result.adversarialMaxMs.toFixed(0)} ms (${JSON.stringify(result.adversarialWorst)} repeated)`);
}
