import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { isErrorLine, trimToolOutput } from '../../src/memory/tool-output.js';

const lines = (text: string) => text.split('\n');

/** A passing build of `count` compiled files: nothing in it but progress. */
function passingBuild(count: number): string {
  const out = ['> app@1.0.0 build', '> tsc -p tsconfig.build.json && node scripts/bundle.mjs', ''];
  const dirs = ['routes', 'models', 'services', 'clients', 'jobs', 'views'];
  for (let i = 0; i < count; i++) out.push(`[bundle] src/${dirs[i % dirs.length]}/module-${(i * 7919) % 100_003}.ts -> dist/${i}.js`);
  out.push(`[bundle] wrote ${count} files in 41.20s`, 'Done in 43.07s.');
  return out.join('\n');
}

/** A jest run: passing suites around one failing test with its stack trace. */
function jestWithFailure(): { output: string; trace: string[] } {
  const out: string[] = [];
  for (let s = 0; s < 30; s++) {
    out.push(`PASS src/suite-${s}.test.ts (1.${s} s)`);
    for (let t = 0; t < 8; t++) out.push(`  ✓ handles case ${s}.${t} (${t + 3} ms)`);
  }
  const trace = [
    '  ● orders › checkout › charges the card once',
    '',
    '    expect(received).toBe(expected) // Object.is equality',
    '',
    '    Expected: 1',
    '    Received: 2',
    '',
    '      40 |     await checkout(cart);',
    '    > 41 |     expect(charge).toHaveBeenCalledTimes(1);',
    '         |                    ^',
    '',
    '      at Object.<anonymous> (src/orders/checkout.test.ts:41:20)',
    '      at processTicksAndRejections (node:internal/process/task_queues:95:5)',
  ];
  out.splice(120, 0, 'FAIL src/orders/checkout.test.ts (2.1 s)', '  ✓ builds the cart (3 ms)', ...trace, '');
  out.push('', 'Test Suites: 1 failed, 30 passed, 31 total', 'Tests:       1 failed, 241 passed, 242 total', 'Time:        12.3 s');
  return { output: out.join('\n'), trace };
}

test('a failing test keeps its name, assertion and stack trace; the passing ones go', () => {
  const { output, trace } = jestWithFailure();
  const trimmed = trimToolOutput(output);
  for (const line of trace) assert.ok(trimmed.includes(line), `lost: ${line}`);
  assert.ok(trimmed.includes('FAIL src/orders/checkout.test.ts'));
  assert.ok(trimmed.includes('Tests:       1 failed, 241 passed, 242 total'), 'the summary at the end');
  assert.ok(trimmed.length < output.length / 4, `${trimmed.length} of ${output.length}`);
  assert.match(trimmed, /\[… \d+ lines omitted …\]/);
  assert.not.ok(trimmed.includes('handles case 20.4'), 'a passing test from the middle');
});

test('a 5,000-line passing build log shrinks to a few lines: its start, its end, a marker', () => {
  const output = passingBuild(5_000);
  const trimmed = trimToolOutput(output);
  assert.ok(lines(trimmed).length <= 25, String(lines(trimmed).length));
  assert.ok(trimmed.length <= 2_000, String(trimmed.length));
  assert.ok(trimmed.startsWith('> app@1.0.0 build\n> tsc -p tsconfig.build.json'));
  assert.ok(trimmed.endsWith('[bundle] wrote 5000 files in 41.20s\nDone in 43.07s.'));
  assert.match(trimmed, /\[… 4\d\d\d lines omitted …\]/);
});

test('a Python traceback in the middle of a long log survives whole', () => {
  const progress = Array.from({ length: 400 }, (_, i) => `INFO load: batch ${i} written to the staging table`);
  const traceback = [
    'Traceback (most recent call last):',
    '  File "/srv/etl/main.py", line 88, in <module>',
    '    main(sys.argv[1:])',
    '  File "/srv/etl/transforms/regions.py", line 57, in normalise',
    '    return REGIONS[row["region_code"]]',
    "KeyError: 'region_code'",
  ];
  const output = [...progress.slice(0, 200), ...traceback, ...progress.slice(200), 'exit status 1'].join('\n');
  const trimmed = trimToolOutput(output);
  assert.ok(trimmed.includes(traceback.join('\n')), trimmed);
  assert.ok(trimmed.endsWith('exit status 1'));
});

test('compiler diagnostics are kept with their code excerpt, from several toolchains', () => {
  const filler = Array.from({ length: 300 }, (_, i) => `   Compiling crate-${i} v0.${i % 10}.${i % 7}`);
  const diagnostics = [
    "src/routes/invoices.ts:48:17 - error TS2339: Property 'taxRate' does not exist on type 'InvoiceDto'.",
    'src/main.c:12:5: error: implicit declaration of function ‘frobnicate’',
    'error[E0308]: mismatched types',
    '  --> src/lib.rs:7:18',
    'Program.cs(3,9): error CS1002: ; expected',
  ];
  const output = [...filler.slice(0, 100), diagnostics[0], '', '48     const rate = dto.taxRate;', ...filler.slice(100, 200), ...diagnostics.slice(1), ...filler.slice(200)].join('\n');
  const trimmed = trimToolOutput(output);
  for (const line of diagnostics) assert.ok(trimmed.includes(line), `lost: ${line}`);
  assert.ok(trimmed.includes('48     const rate = dto.taxRate;'), 'the excerpt after the diagnostic');
});

test('a Java stack trace and its cause survive', () => {
  const noise = Array.from({ length: 200 }, (_, i) => `2026-11-20 10:00:${String(i % 60).padStart(2, '0')} INFO  c.a.Worker - job ${i} done`);
  const trace = [
    '2026-11-20 10:03:20 ERROR c.a.Worker - job 201 failed',
    'java.lang.IllegalStateException: pool exhausted',
    '\tat com.acme.db.Pool.acquire(Pool.java:88)',
    '\tat com.acme.Worker.run(Worker.java:41)',
    'Caused by: java.net.SocketTimeoutException: connect timed out',
    '\tat java.base/sun.nio.ch.NioSocketImpl.timedFinishConnect(NioSocketImpl.java:546)',
    '\t... 12 more',
  ];
  const trimmed = trimToolOutput([...noise, ...trace, ...noise].join('\n'));
  assert.ok(trimmed.includes(trace.join('\n')), trimmed);
});

test('runs of lines alike (progress, retries) collapse to their first two, a count and their last', () => {
  const pulls = Array.from({ length: 40 }, (_, i) => `a2abf6c4d29d Downloading [${'='.repeat(i)}>${' '.repeat(40 - i)}] ${i}.5MB/40MB`);
  const trimmed = trimToolOutput(['Pulling redis', ...pulls, 'a2abf6c4d29d Pull complete'].join('\n'));
  assert.equal(lines(trimmed), ['Pulling redis', pulls[0], pulls[1], '[… 37 similar lines …]', pulls[39], 'a2abf6c4d29d Pull complete']);
});

test('short output comes back unchanged but for colour codes and progress redraws', () => {
  const listing = 'deploy.sh\nrelease.sh\nREADME.md';
  assert.is(trimToolOutput(listing), listing);
  assert.is(trimToolOutput('\u001b[31mFAIL\u001b[0m src/a.test.ts\r\n  \u001b[32m✓\u001b[39m works'), 'FAIL src/a.test.ts\n  ✓ works');
  assert.is(trimToolOutput('downloading 10%\rdownloading 55%\rdownloading 100%\ndone'), 'downloading 100%\ndone');
});

test('a huge single line keeps its ends', () => {
  const blob = JSON.stringify({ items: Array.from({ length: 2_000 }, (_, i) => ({ id: i, name: `item ${i}` })) });
  const trimmed = trimToolOutput(blob);
  assert.ok(trimmed.length <= 500, String(trimmed.length));
  assert.ok(trimmed.startsWith('{"items":[{"id":0,'));
  assert.ok(trimmed.endsWith('"name":"item 1999"}]}'));
});

test('many errors are bounded, and the marker says how many it hides', () => {
  // Each names another module (letters, not only numbers, differ), so they are not alike.
  const name = (i: number) => String.fromCharCode(97 + (i % 26), 97 + (Math.floor(i / 26) % 26));
  const output = Array.from({ length: 600 }, (_, i) => `src/gen/${name(i)}.ts:${i + 1}:3 - error TS2307: Cannot find module './${name(i)}-schema'.`).join('\n');
  const trimmed = trimToolOutput(output);
  assert.ok(trimmed.length <= 4_000, String(trimmed.length));
  assert.ok(trimmed.includes("src/gen/aa.ts:1:3 - error TS2307: Cannot find module './aa-schema'."), 'the first error');
  assert.match(trimmed, /lines omitted, \d+ of them with errors …\]/);
});

test('what counts as an error line', () => {
  const errors = [
    'ERROR: command finished with error',
    '[ERROR] Failed to execute goal',
    'npm ERR! code ELIFECYCLE',
    'error: could not compile `app`',
    'Error: Cannot find module "x"',
    'fatal: not a git repository',
    'panic: runtime error: index out of range [3] with length 3',
    "KeyError: 'region_code'",
    'java.lang.NullPointerException',
    'FAIL src/a.test.ts',
    '--- FAIL: TestCheckout (0.01s)',
    'not ok 3 - charges once',
    'Tests: 1 failed, 20 passed',
    'Exit code 2',
    'Process exited with code 1',
    'error Command failed with exit code 1.',
    'make: *** [Makefile:12: build] Error 2',
  ];
  const fine = [
    'const ERROR_CODES = { notFound: 404 };',
    '  log.error({ err }, "request failed to parse");'.replace('failed', 'did not'),
    '  throw new NotFoundError(id);',
    'src/errors/error-handler.ts',
    'Exit code 0',
    'exited (0)',
    'Tests: 20 passed, 20 total',
    '  ✓ reports errors to the caller (3 ms)',
  ];
  for (const line of errors) assert.ok(isErrorLine(line), `not an error: ${line}`);
  for (const line of fine) assert.not.ok(isErrorLine(line), `an error: ${line}`);
});

test.run();
