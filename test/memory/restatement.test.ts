/**
 * Extraction stores nothing that only restates the conversation's own instructions
 * (issue 25): what the filter drops and what it keeps, on a project's rules as a
 * `CLAUDE.md` or `AGENTS.md` writes them; and the instruction sentences a job carries.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  RESTATEMENT_THRESHOLD,
  instructionCoverage,
  instructionIndex,
  restatesInstructions,
  stemOf,
  withoutRestatements,
} from '../../src/memory/restatement.js';
import { instructionUnits, shownInstructions } from '../../src/memory/instruction-text.js';
import { createCleanedTurns } from '../../src/memory/cleaned-turns.js';

const RULES = `# Project rules
- Always run \`npm run lint\` before committing.
- Never push directly to main; open a pull request.
- Use pnpm, not npm or yarn, to add dependencies.
- Tests use uvu and live under test/, mirroring src/.
- Database migrations go in db/migrations and are applied with \`make migrate\`.
- The staging deploy script is tools/deploy.sh; it reads DEPLOY_ENV.`;

const index = instructionIndex(instructionUnits([RULES], 16_000));

test('a rule said again in other words is a restatement', () => {
  for (const content of [
    'The user wants lint run before every commit.',
    'Do not push to main directly; changes go through pull requests.',
    'Pull requests are required for main; direct pushes are not allowed.',
    'Dependencies are added with pnpm rather than npm or yarn.',
    'Tests are written with uvu and placed in test/ mirroring the src/ layout.',
    'Apply database migrations with make migrate; they live in db/migrations.',
    'Deploy to staging with tools/deploy.sh, which reads DEPLOY_ENV.',
  ]) {
    assert.ok(restatesInstructions(index, content), `${content}: ${instructionCoverage(index, content)}`);
  }
});

test('a genuinely new fact that shares a few words with a rule is kept', () => {
  for (const content of [
    'The payments service configuration lives in config/payments.yaml; the Stripe key comes from STRIPE_SECRET_KEY.',
    'The test suite for the billing module takes 4 minutes; run only test/billing with npm test -- billing.',
    'Alice owns the main branch protection settings in GitHub.',
    'The main entry point is src/main.ts.',
  ]) {
    assert.not.ok(restatesInstructions(index, content), `${content}: ${instructionCoverage(index, content)}`);
  }
});

test('a lesson that extends a rule with a new detail is kept', () => {
  for (const content of [
    'Run npm run lint before committing, with --fix.',
    'Run npm run lint before committing; it fails on the generated files in src/gen unless ESLINT_USE_FLAT_CONFIG=false is set.',
    'make migrate needs the Postgres container from docker compose up db running first, or it fails with ECONNREFUSED.',
    'tools/deploy.sh with DEPLOY_ENV=production also needs the VPN; without it the script hangs at the rsync step.',
  ]) {
    assert.not.ok(restatesInstructions(index, content), `${content}: ${instructionCoverage(index, content)}`);
  }
});

test('coverage is the share held by one passage of up to three sentences, not by the whole text', () => {
  // Each word is in the rules, but spread over sentences far apart: a new combination.
  const content = 'Deploy migrations with pnpm.';
  assert.ok(instructionCoverage(index, content) < RESTATEMENT_THRESHOLD, String(instructionCoverage(index, content)));
  // Two neighbouring rules merged into one sentence are still a restatement.
  assert.ok(restatesInstructions(index, 'Use pnpm for dependencies, and uvu for the tests under test/.'));
});

test('without instructions nothing is dropped, and proposals without text are left to the writer', () => {
  const none = instructionIndex([]);
  assert.not.ok(restatesInstructions(none, 'Always run npm run lint before committing.'));
  const proposals = [
    { kind: 'procedural', content: 'Always run npm run lint before committing.' },
    { kind: 'factual', content: 'The payments config is config/payments.yaml.' },
    { kind: 'factual' },
    null,
  ];
  assert.equal(withoutRestatements(none, proposals), { kept: proposals, dropped: 0 });
  const { kept, dropped } = withoutRestatements(index, proposals);
  assert.is(dropped, 1);
  assert.equal(kept, proposals.slice(1));
});

test('stems: inflections of one word meet', () => {
  assert.is(stemOf('committing'), stemOf('commit'));
  assert.is(stemOf('tests'), stemOf('testing'));
  assert.is(stemOf('dependencies'), stemOf('dependency'));
  assert.is(stemOf('deployment'), stemOf('deploys'));
});

test('instruction units: sentences without list marks, repeats and word-less lines left out, Engram blocks stripped, secrets redacted, bounded', () => {
  const texts = [
    '<system-reminder>\n# claudeMd\nContents of /repo/CLAUDE.md:\n\n- Run the tests with `pnpm test`. Never skip them.\n- Run the tests with `pnpm test`.\n</system-reminder>',
    'You are a coding agent.\n<engram-reflections>\n- [factual] (x) Stored reflection text here.\n</engram-reflections>\nThe deploy key is AKIAABCDEFGHIJKLMNOP for the staging bucket.',
  ];
  const units = instructionUnits(texts, 16_000);
  assert.ok(units.includes('Run the tests with `pnpm test`.'), units.join('\n'));
  assert.ok(units.includes('Never skip them.') === false, 'one content word is no rule');
  assert.is(units.filter((unit) => unit === 'Run the tests with `pnpm test`.').length, 1);
  assert.not.ok(units.some((unit) => unit.includes('Stored reflection')), 'Engram\'s own block is not the client\'s instruction');
  assert.not.ok(units.some((unit) => unit.includes('AKIAABCDEFGHIJKLMNOP')), units.join('\n'));
  assert.ok(units.some((unit) => unit.includes('[REDACTED:')), units.join('\n'));
  assert.not.ok(units.includes('You are a coding agent.'));
  // The bound keeps the first sentences, most specific first.
  const small = instructionUnits(texts, 40);
  assert.equal(small, ['Contents of /repo/CLAUDE.md:']);
  assert.equal(shownInstructions(units, 40), small);
  // Split once: the same system prompt re-sent is found split (one entry, the whole list), redacted.
  const cleaned = createCleanedTurns();
  assert.equal(instructionUnits(texts, 16_000, cleaned), units);
  assert.is(cleaned.size.entries, 1);
  assert.equal(instructionUnits(texts, 16_000, cleaned), units);
  assert.is(cleaned.size.entries, 1);
  assert.equal(instructionUnits(texts, 40, cleaned), small, 'another bound is another list');
  assert.equal(instructionUnits([], 16_000, cleaned), []);
});

test.run();
