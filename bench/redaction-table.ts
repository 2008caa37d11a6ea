/**
 * The redaction table (issue 15's closing note): each shape of the corpus
 * (test/fixtures/secrets/shapes.json) in the five contexts, through `redactSecrets` as it
 * was at an earlier revision and as it is now. A shape counts as caught in a context when
 * no part of its secret is left; the marker says which rule took it.
 *
 * `node --import tsx bench/redaction-table.ts [--before <git revision>]` prints Markdown.
 */
import { redactSecrets } from '../src/redaction/redact.js';
import { CONTEXTS, SAMPLES, secretParts, type Sample } from '../test/fixtures/secrets/corpus.js';
import { BEFORE_RULESET, redactionAt, type Redact } from './redaction.js';

interface Verdict {
  caught: number;
  kinds: string[];
}

function judge(redact: Redact, sample: Sample): Verdict {
  let caught = 0;
  const kinds = new Set<string>();
  for (const wrap of Object.values(CONTEXTS)) {
    const out = redact(wrap(sample.snippet));
    if (!secretParts(sample.secret).some((part) => out.includes(part))) caught++;
    for (const match of out.matchAll(/\[REDACTED:([a-z_]+)\]/g)) kinds.add(match[1]);
  }
  return { caught, kinds: [...kinds] };
}

const contexts = Object.keys(CONTEXTS).length;
const cell = (v: Verdict) => (v.caught === contexts ? 'caught' : v.caught === 0 ? 'missed' : `missed in ${contexts - v.caught}/${contexts}`);

const at = process.argv.indexOf('--before');
const revision = at > 0 ? process.argv[at + 1] : BEFORE_RULESET;
const before = await redactionAt(revision);
if (!before) throw new Error(`cannot load redact.ts at ${revision}`);

const lines = [
  `| shape | probe | before (${revision}) | after | marker after |`,
  '| --- | --- | --- | --- | --- |',
];
const totals = { before: 0, after: 0, probeBefore: 0, probeAfter: 0 };
for (const sample of SAMPLES) {
  const old = judge(before, sample);
  const now = judge(redactSecrets, sample);
  if (old.caught === contexts) totals.before++;
  if (now.caught === contexts) totals.after++;
  if (sample.shape.probe && old.caught === contexts) totals.probeBefore++;
  if (sample.shape.probe && now.caught === contexts) totals.probeAfter++;
  lines.push(`| ${sample.shape.shape.replace(/\|/g, '\\|')} | ${sample.shape.probe ? 'yes' : ''} | ${cell(old)} | ${cell(now)} | ${now.kinds.join(', ')} |`);
}
const probes = SAMPLES.filter((sample) => sample.shape.probe).length;
console.log(lines.join('\n'));
console.log(
  `\nCaught in all ${contexts} contexts (prose, tool output, JSON-escaped tool arguments, transcript line, remember): ` +
    `before ${totals.before}/${SAMPLES.length}, after ${totals.after}/${SAMPLES.length}; ` +
    `the probe's ${probes}: before ${totals.probeBefore}/${probes}, after ${totals.probeAfter}/${probes}.`,
);
