/**
 * A coding agent's session for the extraction-cost phase: tasks a user gives, each worked
 * through several tool calls whose outputs are what real tools print (a monorepo build
 * log, a test run with one failure and its stack trace, a file listing, grep hits, file
 * reads, a package-lock diff, an ETL job's progress log ending in a traceback). Outputs
 * are kilobytes long, many lines alike, and only a few of their lines say what went wrong.
 *
 * Each task also names its `evidence`: lines of tool output that carry what was learnt
 * (the error, the failing assertion and its first frame). The phase checks that these,
 * and every user and assistant text, reach extraction. And what the agent `remembers`
 * on purpose, without tags, for the tagging job to tag. Deterministic, so runs compare.
 */
import { prng } from './workload.js';

export interface ToolStep {
  /** What the assistant says before the call. */
  say: string;
  tool: 'Bash' | 'Read' | 'Grep' | 'Glob' | 'Edit';
  input: Record<string, unknown>;
  output: string;
  /** The tool reported a failure (`is_error`). */
  failed?: boolean;
}

export interface AgentTask {
  ask: string;
  steps: ToolStep[];
  answer: string;
  /** Lines of tool output that carry the lesson: extraction must see them. */
  evidence: string[];
  /**
   * What the agent stores on purpose during the task (MCP `remember`), without tags, as
   * agents often do: the tagging job tags them, and its calls count in the cost.
   */
  remembers: string[];
}

type Random = () => number;

const int = (random: Random, low: number, high: number) => low + Math.floor(random() * (high - low + 1));
const pick = <T>(random: Random, list: readonly T[]): T => list[Math.floor(random() * list.length)];

const WORDS = ['invoice', 'customer', 'ledger', 'payment', 'refund', 'tax', 'currency', 'report', 'session', 'token', 'tenant', 'audit', 'export', 'schedule', 'webhook', 'limit', 'quota', 'region'];
const VERBS = ['create', 'update', 'load', 'find', 'render', 'validate', 'apply', 'resolve', 'sync', 'parse', 'format', 'compute'];
const camel = (a: string, b: string) => a + b[0].toUpperCase() + b.slice(1);

/** Plausible TypeScript source lines, for file reads and diffs. */
function codeLines(random: Random, count: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const w = pick(random, WORDS);
    const v = pick(random, VERBS);
    const shapes = [
      `import { ${camel(v, w)} } from '../${w}s/${v}-${w}.js';`,
      `export async function ${camel(v, w)}(id: string, options: ${w[0].toUpperCase() + w.slice(1)}Options = {}): Promise<void> {`,
      `  const ${w} = await repository.${camel(v, w)}(id, { tenantId: ctx.tenantId });`,
      `  if (!${w}) throw new NotFoundError('${w}', id);`,
      `  log.debug({ ${w}Id: id, step: '${v}' }, '${v} ${w}');`,
      `  return ${camel(v, w)}Schema.parse(${w});`,
      `}`,
      ``,
      `  // ${v} the ${w} before the ${pick(random, WORDS)} is ${pick(random, VERBS)}d`,
    ];
    lines.push(shapes[i % 9 === 8 ? 8 : int(random, 0, 7)]);
  }
  return lines;
}

/** Claude Code's Read output: `cat -n` numbering. */
const numbered = (lines: string[], from = 1) => lines.map((line, i) => `${String(from + i).padStart(6)}\t${line}`).join('\n');

const PACKAGES = ['shared-types', 'logger', 'config', 'http-client', 'db', 'auth-sdk', 'feature-flags', 'metrics', 'ui-kit', 'i18n', 'testing', 'money'];

/** A turborepo build: packages replayed from cache, then the target package's own output. */
function monorepoBuild(random: Random, target: string, own: string[]): string {
  const lines = [`> acme@0.0.0 build`, `> turbo run build --filter=${target}...`, '', `• Packages in scope: ${target}, ${PACKAGES.map((p) => '@acme/' + p).join(', ')}`, `• Running build in ${PACKAGES.length + 1} packages`, `• Remote caching disabled`];
  for (const pkg of PACKAGES) {
    lines.push(`@acme/${pkg}:build: cache hit, replaying logs ${(random() * 2 ** 52).toString(16).slice(0, 16)}`);
    lines.push(`@acme/${pkg}:build: `, `@acme/${pkg}:build: > @acme/${pkg}@1.${int(random, 0, 9)}.${int(random, 0, 20)} build`, `@acme/${pkg}:build: > tsc -p tsconfig.build.json`, `@acme/${pkg}:build: `);
    for (let i = 0, n = int(random, 4, 9); i < n; i++) lines.push(`@acme/${pkg}:build: dist/${pick(random, WORDS)}-${pick(random, VERBS)}.js  ${int(random, 1, 40)}.${int(random, 0, 9)} kB`);
  }
  return [...lines, ...own.map((line) => `${target}:build: ${line}`)].join('\n');
}

function bundleLines(random: Random, count: number): string[] {
  const lines = ['', `> build`, `> tsc -p tsconfig.build.json && node scripts/bundle.mjs`, ''];
  for (let i = 0; i < count; i++) lines.push(`[bundle] src/${pick(random, WORDS)}s/${pick(random, VERBS)}-${pick(random, WORDS)}.ts -> dist/${i}.js (${int(random, 1, 90)}.${int(random, 0, 9)} kB)`);
  lines.push(`[bundle] wrote ${count} files (${int(random, 1, 3)}.${int(random, 0, 9)} MB) in ${int(random, 2, 9)}.${int(random, 10, 99)}s`);
  return lines;
}

/** A jest run: passing suites, and the failing ones' blocks before the summary. */
function jestRun(random: Random, suites: number, failure?: string[]): string {
  const lines: string[] = [];
  let tests = 0;
  for (let s = 0; s < suites; s++) {
    const file = `src/${pick(random, WORDS)}/${pick(random, VERBS)}-${pick(random, WORDS)}.test.ts`;
    const failing = failure !== undefined && s === Math.floor(suites * 0.6);
    lines.push(`${failing ? 'FAIL' : 'PASS'} ${file} (${int(random, 1, 9)}.${int(random, 100, 999)} s)`);
    for (let t = 0, n = int(random, 5, 11); t < n; t++, tests++) {
      lines.push(`  ✓ ${pick(random, VERBS)}s the ${pick(random, WORDS)} when the ${pick(random, WORDS)} is ${pick(random, ['missing', 'expired', 'valid', 'empty', 'shared', 'stale'])} (${int(random, 1, 80)} ms)`);
    }
    if (failing) lines.push(...failure);
  }
  const failed = failure ? 1 : 0;
  lines.push('', `Test Suites: ${failed ? `${failed} failed, ` : ''}${suites - failed} passed, ${suites} total`, `Tests:       ${failed ? `${failed} failed, ` : ''}${tests} passed, ${tests + failed} total`, 'Snapshots:   0 total', `Time:        ${int(random, 20, 60)}.${int(random, 100, 999)} s`, 'Ran all test suites.');
  return lines.join('\n');
}

function dockerPull(random: Random, service: string): string {
  const layers = Array.from({ length: 6 }, () => (random() * 2 ** 52).toString(16).slice(0, 12));
  const lines = [`[+] Running 1/1`, ` ${service} Pulling`];
  for (const layer of layers) {
    const total = int(random, 2, 40);
    for (let done = 0; done < total; done += Math.max(1, Math.floor(total / 8))) {
      const bar = '='.repeat(Math.floor((done / total) * 40)) + '>';
      lines.push(`   ${layer} Downloading [${bar.padEnd(41)}]  ${done}.${int(random, 0, 9)}MB/${total}MB`);
    }
    lines.push(`   ${layer} Download complete`);
    for (let step = 0; step < 5; step++) lines.push(`   ${layer} Extracting [${'='.repeat(step * 10)}>${' '.repeat(40 - step * 10)}]  ${step * 8}.${int(random, 0, 9)}MB/${total}MB`);
    lines.push(`   ${layer} Pull complete`);
  }
  lines.push(` ${service} Pulled`, '[+] Running 2/2', ` Network auth-service_default  Created`, ` Container auth-service-${service}-1  Started`);
  return lines.join('\n');
}

function etlRun(random: Random, rows: number, crash: string[] | undefined): string {
  const lines = [`2026-11-20 02:00:0${int(random, 1, 9)} INFO etl.nightly: starting nightly load for 2026-11-20 (source=warehouse, batch=1000)`];
  const upTo = crash ? Math.floor(rows * 0.7) : rows;
  for (let done = 1000; done <= upTo; done += 1000) {
    lines.push(`2026-11-20 02:${String(Math.floor(done / 2000)).padStart(2, '0')}:${String(int(random, 0, 59)).padStart(2, '0')} INFO etl.load: processed ${done}/${rows} rows (${((done / rows) * 100).toFixed(1)}%)`);
    if (random() < 0.15) lines.push(`2026-11-20 02:${String(Math.floor(done / 2000)).padStart(2, '0')}:${String(int(random, 0, 59)).padStart(2, '0')} WARNING etl.transforms.currency: rate for ${pick(random, ['CHF', 'SEK', 'NOK', 'PLN'])} missing on 2026-11-19, using previous day`);
  }
  if (crash) return [...lines, ...crash].join('\n');
  return [...lines, `2026-11-20 02:41:13 INFO etl.nightly: done: ${rows} rows in 41.2s`].join('\n');
}

const TS_ERROR = "services/billing-api/src/routes/invoices.ts:48:17 - error TS2339: Property 'taxRate' does not exist on type 'InvoiceDto'.";
const TEST_ERROR = '    connect ECONNREFUSED 127.0.0.1:6380';
const TEST_FRAME = '      at RedisSessionStore.connect (src/session/redis-store.ts:31:11)';
const PY_ERROR = "KeyError: 'region_code'";
const PY_FRAME = '  File "/srv/etl/etl/transforms/regions.py", line 57, in normalise_region';

/** The session's tasks, in order. */
export function agentSession(seed = 11): AgentTask[] {
  const random = prng(seed);
  const tsFailure = [
    '',
    TS_ERROR,
    '',
    '48     const rate = dto.taxRate ?? DEFAULT_TAX_RATE;',
    '                       ~~~~~~~',
    '',
    "services/billing-api/src/routes/invoices.ts:63:9 - error TS2322: Type 'string' is not assignable to type 'number'.",
    '',
    'Found 2 errors in the same file, starting at: services/billing-api/src/routes/invoices.ts:48',
    'ERROR: command finished with error: command (services/billing-api) npm run build exited (2)',
  ];
  const codegen = ['> make codegen', 'openapi-generator-cli generate -g typescript-fetch -i schema/invoice.yaml -o src/clients/generated'];
  for (let i = 0; i < 70; i++) codegen.push(`[main] INFO  o.o.codegen.TemplateManager - writing file /work/services/billing-api/src/clients/generated/models/${camel(pick(random, WORDS), pick(random, WORDS))}${i}.ts`);
  codegen.push('[main] INFO  o.o.codegen.DefaultGenerator - Successfully generated code to src/clients/generated');

  const failureBlock = [
    '  ● session store › refresh › keeps the session when the token is rotated',
    '',
    '    RedisConnectionError: Connection is closed.',
    '',
    '      29 |   async connect(): Promise<void> {',
    '      30 |     if (this.client.status === "ready") return;',
    '    > 31 |     await this.client.connect();',
    '         |           ^',
    '      32 |   }',
    '',
    TEST_FRAME,
    '      at Object.<anonymous> (src/session/refresh.test.ts:18:5)',
    '',
    '    Cause:',
    TEST_ERROR,
    '      at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)',
    '',
  ];

  const gatewayFiles = Array.from({ length: 260 }, () => `services/edge-gateway/${pick(random, ['src', 'src/middleware', 'src/routes', 'test', 'config', 'deploy/helm/templates'])}/${pick(random, VERBS)}-${pick(random, WORDS)}.${pick(random, ['ts', 'ts', 'test.ts', 'yaml', 'json'])}`);
  const grepHits = Array.from({ length: 75 }, () => `services/edge-gateway/src/${pick(random, ['middleware', 'routes', 'plugins'])}/${pick(random, VERBS)}-${pick(random, WORDS)}.ts:${int(random, 3, 240)}:    ${pick(random, ['rateLimit', 'config.rateLimit', 'opts.rateLimit'])}.${pick(random, ['max', 'windowMs', 'keyGenerator', 'skip'])}${pick(random, [' = ', ': ', ' ?? '])}${int(random, 1, 600)},`);
  const limitsJson = JSON.stringify(
    { defaults: { windowMs: 60_000, max: 600 }, routes: Object.fromEntries(Array.from({ length: 24 }, (_, i) => [`/v1/${pick(random, WORDS)}s/${i}`, { windowMs: 60_000, max: int(random, 30, 1200), burst: int(random, 5, 50) }])) },
    null,
    2,
  ).split('\n');

  const lockDiff = ['diff --git a/package-lock.json b/package-lock.json', 'index 4be1c2a..91f0d7e 100644', '--- a/package-lock.json', '+++ b/package-lock.json'];
  for (let i = 0; i < 40; i++) {
    const name = `${pick(random, WORDS)}-${pick(random, VERBS)}`;
    lockDiff.push(`@@ -${1000 + i * 37},7 +${1000 + i * 37},7 @@`, `     "node_modules/${name}": {`, `-      "version": "${int(random, 1, 5)}.${int(random, 0, 20)}.${int(random, 0, 9)}",`, `+      "version": "${int(random, 1, 5)}.${int(random, 0, 20)}.${int(random, 0, 9)}",`, `-      "integrity": "sha512-${Buffer.from((random() * 2 ** 52).toString(36).repeat(6)).toString('base64').slice(0, 86)}==",`, `+      "integrity": "sha512-${Buffer.from((random() * 2 ** 52).toString(36).repeat(6)).toString('base64').slice(0, 86)}==",`, `       "dev": true,`);
  }
  const npmWarnings = Array.from({ length: 24 }, () => `npm warn deprecated ${pick(random, ['inflight', 'glob', 'rimraf', 'har-validator', 'request', 'uuid', 'querystring'])}@${int(random, 1, 7)}.${int(random, 0, 9)}.${int(random, 0, 9)}: This module is not supported, and leaks memory. Do not use it.`);

  const crash = [
    'Traceback (most recent call last):',
    '  File "/srv/etl/etl/nightly.py", line 88, in <module>',
    '    main(sys.argv[1:])',
    '  File "/srv/etl/etl/nightly.py", line 71, in main',
    '    load(batch, transforms=DEFAULT_TRANSFORMS)',
    '  File "/srv/etl/etl/load.py", line 140, in load',
    '    row = transform(row)',
    PY_FRAME,
    '    return REGIONS[row["region_code"].upper()]',
    PY_ERROR,
  ];
  const regionsPy = Array.from({ length: 95 }, (_, i) =>
    i === 56 ? '    return REGIONS[row["region_code"].upper()]' : i === 55 ? 'def normalise_region(row: dict) -> str:' : `    ${pick(random, WORDS)}_${pick(random, WORDS)} = row.get("${pick(random, WORDS)}")  # ${pick(random, VERBS)} it`,
  );

  return [
    {
      ask: 'The CI build of services/billing-api has been red on main since this morning. Find out why and fix it.',
      steps: [
        { say: "I'll reproduce the build locally.", tool: 'Bash', input: { command: 'npm run build -- --filter=services/billing-api', description: 'Build billing-api' }, output: `Exit code 2\n${monorepoBuild(random, 'services/billing-api', tsFailure)}`, failed: true },
        { say: 'Let me look at the route that fails to compile.', tool: 'Read', input: { file_path: '/work/services/billing-api/src/routes/invoices.ts' }, output: numbered(codeLines(random, 130)) },
        { say: 'The DTO comes from the generated client; let me check the schema history.', tool: 'Bash', input: { command: 'git log --oneline -8 -- services/billing-api/schema', description: 'Recent schema changes' }, output: ['4f2a91c invoice: add taxRate to InvoiceDto', '9b1e07d invoice: document currency codes', 'c3d5a8e chore: bump openapi-generator to 7.9', '71aa2f0 invoice: paginate list endpoint', 'e0c4b19 schema: split customer and invoice specs', '5d2f6a3 invoice: add dueDate', '0a9c771 schema: initial import', '2b7e5c1 ci: lint schemas'].join('\n') },
        { say: 'The schema gained taxRate but the client was not regenerated. Regenerating.', tool: 'Bash', input: { command: 'cd services/billing-api && make codegen', description: 'Regenerate API clients' }, output: codegen.join('\n') },
        { say: 'Now the build again.', tool: 'Bash', input: { command: 'npm run build -- --filter=services/billing-api', description: 'Build billing-api' }, output: monorepoBuild(random, 'services/billing-api', bundleLines(random, 110)) },
      ],
      answer:
        'Fixed. Commit 4f2a91c added `taxRate` to `InvoiceDto` in `services/billing-api/schema/invoice.yaml`, but the generated client under `src/clients/generated` was not regenerated, so `src/routes/invoices.ts` no longer compiled (TS2339). I ran `make codegen` in `services/billing-api` and the build passes. After any change to `schema/*.yaml`, run `make codegen` there and commit the generated files: CI does not regenerate them.',
      evidence: [TS_ERROR],
      remembers: ['After changing services/billing-api/schema/*.yaml, run make codegen in services/billing-api and commit src/clients/generated; CI does not regenerate the API clients.'],
    },
    {
      ask: 'npm test in services/auth-service fails on my machine but passes in CI. Can you see why?',
      steps: [
        { say: 'Running the tests to see the failure.', tool: 'Bash', input: { command: 'cd services/auth-service && npm test', description: 'Run auth-service tests' }, output: `Exit code 1\n${jestRun(random, 22, failureBlock)}`, failed: true },
        { say: 'Redis on 6380 refuses connections. Is it running?', tool: 'Bash', input: { command: 'docker compose ps', description: 'List containers' }, output: 'NAME                     IMAGE              COMMAND                  SERVICE    STATUS          PORTS\nauth-service-postgres-1  postgres:16        "docker-entrypoint.s…"   postgres   Up 3 hours      0.0.0.0:5433->5432/tcp' },
        { say: 'Only postgres is up. Checking the compose file.', tool: 'Read', input: { file_path: '/work/services/auth-service/docker-compose.yml' }, output: numbered(['services:', '  postgres:', '    image: postgres:16', '    ports: ["5433:5432"]', '    environment:', '      POSTGRES_PASSWORD: postgres', '  redis:', '    image: redis:7.4', '    ports: ["6380:6379"]', '    profiles: ["test"]', ...codeLines(random, 40).map((line) => `# ${line}`)]) },
        { say: 'Redis is behind the `test` profile. Starting it.', tool: 'Bash', input: { command: 'docker compose --profile test up -d redis', description: 'Start redis' }, output: dockerPull(random, 'redis') },
        { say: 'Running the tests again.', tool: 'Bash', input: { command: 'cd services/auth-service && npm test', description: 'Run auth-service tests' }, output: jestRun(random, 22) },
      ],
      answer:
        "The failing test needs Redis on port 6380, and in `services/auth-service/docker-compose.yml` the redis service is behind the `test` profile, so a plain `docker compose up -d` only starts postgres. Start it with `docker compose --profile test up -d redis` before `npm test`; CI passes because its workflow enables that profile. All 22 suites pass now.",
      evidence: [TEST_ERROR.trim(), TEST_FRAME.trim()],
      remembers: ['The services/auth-service tests need Redis on port 6380, which only starts with docker compose --profile test up -d redis.'],
    },
    {
      ask: 'Where are the rate limits of edge-gateway configured? I need to raise the limit for /v1/exports.',
      steps: [
        { say: "I'll look at the gateway's files.", tool: 'Glob', input: { pattern: 'services/edge-gateway/**/*' }, output: gatewayFiles.join('\n') },
        { say: 'Searching for the rate limit settings.', tool: 'Grep', input: { pattern: 'rateLimit', path: 'services/edge-gateway', output_mode: 'content', '-n': true }, output: grepHits.join('\n') },
        { say: 'The middleware reads config/limits.json.', tool: 'Read', input: { file_path: '/work/services/edge-gateway/config/limits.json' }, output: numbered(limitsJson) },
        { say: 'Raising the exports limit.', tool: 'Edit', input: { file_path: '/work/services/edge-gateway/config/limits.json', old_string: '"/v1/exports": { "max": 60 }', new_string: '"/v1/exports": { "max": 240 }' }, output: '<tool_use_error>String to replace not found in file.\nString: "/v1/exports": { "max": 60 }</tool_use_error>', failed: true },
        { say: 'The entry has no exports route yet; reading the file again before adding it.', tool: 'Read', input: { file_path: '/work/services/edge-gateway/config/limits.json' }, output: numbered(limitsJson) },
        { say: 'Adding the route.', tool: 'Edit', input: { file_path: '/work/services/edge-gateway/config/limits.json', old_string: '"routes": {', new_string: '"routes": {\n    "/v1/exports": { "windowMs": 60000, "max": 240, "burst": 20 },' }, output: `The file /work/services/edge-gateway/config/limits.json has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${numbered(limitsJson.slice(0, 8))}` },
      ],
      answer:
        'Per-route rate limits of edge-gateway live in `services/edge-gateway/config/limits.json` (read by the rate-limit middleware at start-up); routes without an entry get `defaults` (600 requests per minute). There was no entry for `/v1/exports`, so I added one with 240 per minute and a burst of 20. The gateway only reads the file at start-up: restart it after changing limits.',
      evidence: [],
      remembers: ['Per-route rate limits of edge-gateway live in services/edge-gateway/config/limits.json, read only at start-up: restart the gateway after changing them.'],
    },
    {
      ask: 'Please upgrade lodash to 4.17.21 in apps/web-frontend and make sure nothing breaks.',
      steps: [
        { say: 'Installing the new version.', tool: 'Bash', input: { command: 'npm install lodash@4.17.21 --workspace apps/web-frontend', description: 'Upgrade lodash' }, output: [...npmWarnings, '', 'added 3 packages, removed 1 package, changed 2 packages, and audited 1532 packages in 21s', '', '214 packages are looking for funding', '  run `npm fund` for details', '', '3 moderate severity vulnerabilities', '', 'To address all issues, run:', '  npm audit fix', '', 'Run `npm audit` for details.'].join('\n') },
        { say: 'Type-checking the app.', tool: 'Bash', input: { command: 'npx tsc --noEmit -p apps/web-frontend', description: 'Type-check' }, output: '' },
        { say: 'Running the unit tests.', tool: 'Bash', input: { command: 'npm test --workspace apps/web-frontend -- --reporter=verbose', description: 'Run web-frontend tests' }, output: jestRun(random, 18) },
        { say: 'Checking what changed.', tool: 'Bash', input: { command: 'git diff --stat && git diff package-lock.json', description: 'Show the diff' }, output: [' apps/web-frontend/package.json |   2 +-', ' package-lock.json              | 160 +++++++--------', ' 2 files changed, 81 insertions(+), 81 deletions(-)', ...lockDiff].join('\n') },
      ],
      answer:
        'lodash is now 4.17.21 in `apps/web-frontend` (package.json and package-lock.json). The type check is clean and all 18 test suites pass. npm still reports 3 moderate vulnerabilities, all in dev dependencies of the storybook setup, unrelated to lodash.',
      evidence: [],
      remembers: [],
    },
    {
      ask: 'The nightly reporting-etl job crashed last night. Run it for 2026-11-20 and fix whatever breaks.',
      steps: [
        { say: 'Running the job for that date.', tool: 'Bash', input: { command: 'cd services/reporting-etl && python -m etl.nightly --date 2026-11-20', description: 'Run the nightly ETL' }, output: `Exit code 1\n${etlRun(random, 52_000, crash)}`, failed: true },
        { say: 'Reading the transform that fails.', tool: 'Read', input: { file_path: '/work/services/reporting-etl/etl/transforms/regions.py' }, output: numbered(regionsPy) },
        { say: 'Who else reads region_code?', tool: 'Grep', input: { pattern: 'region_code', path: 'services/reporting-etl', output_mode: 'content', '-n': true }, output: Array.from({ length: 22 }, () => `services/reporting-etl/etl/${pick(random, ['transforms', 'load', 'sources'])}/${pick(random, WORDS)}.py:${int(random, 5, 200)}:    ${pick(random, WORDS)} = row.get("region_code") or "${pick(random, ['EU', 'US', 'APAC'])}"`).join('\n') },
        { say: 'Making the transform tolerate rows without a region, like the other readers do.', tool: 'Edit', input: { file_path: '/work/services/reporting-etl/etl/transforms/regions.py', old_string: '    return REGIONS[row["region_code"].upper()]', new_string: '    code = (row.get("region_code") or "UNKNOWN").upper()\n    return REGIONS.get(code, REGIONS["UNKNOWN"])' }, output: `The file /work/services/reporting-etl/etl/transforms/regions.py has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n${numbered(regionsPy.slice(50, 62), 51)}` },
        { say: 'Running the job again.', tool: 'Bash', input: { command: 'cd services/reporting-etl && python -m etl.nightly --date 2026-11-20', description: 'Run the nightly ETL' }, output: etlRun(random, 52_000, undefined) },
      ],
      answer:
        "The job crashed with `KeyError: 'region_code'` in `etl/transforms/regions.py` (`normalise_region`): since the warehouse export of 2026-11-19 some rows have no `region_code`, and that transform was the only reader not using `row.get`. It now maps missing codes to `UNKNOWN`, like the other readers, and the run for 2026-11-20 completes (52,000 rows). Rows without a region now land in the UNKNOWN bucket of the regional report.",
      evidence: [PY_ERROR, PY_FRAME.trim()],
      remembers: [
        'Since the warehouse export of 2026-11-19 some reporting-etl rows have no region_code: read it with row.get and map a missing one to UNKNOWN.',
        'Run the reporting-etl nightly job for one day with python -m etl.nightly --date YYYY-MM-DD in services/reporting-etl.',
      ],
    },
  ];
}
