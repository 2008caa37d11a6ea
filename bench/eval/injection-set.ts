/**
 * The injection evaluation's data: what one software team's coding agent would have
 * learnt about its project, and requests a developer would send that agent.
 *
 * How it was written: by hand, for this evaluation, without looking at any embedder's
 * scores. The team is invented ("Tidewater", a shipment-tracking product: a pnpm monorepo
 * with an api-gateway, billing-svc, shipment-tracker and notifier, a web app, Kafka,
 * Postgres, Redis, Kubernetes). The reflections are distinct facts (where things live,
 * who owns what) and procedures (how to build, test, deploy, release; mistakes to avoid),
 * one each, so that a request needs exactly one of them.
 *   - NEEDING requests each need one reflection, named by `needs`. About half are
 *     `paraphrase`: phrased by meaning with as little word overlap with the reflection as
 *     a developer would naturally have ("the thing the build reads from isn't up"); the
 *     rest are `direct`, naming the tool, file or command. Some are one line, some wrap
 *     the question around pasted error output or a stack trace, a few are long enough
 *     that retrieval only sees their head and tail.
 *   - UNRELATED requests need none: programming questions in other stacks or of general
 *     knowledge, other topics (cooking, travel, maths, writing), small talk, and near
 *     misses that share a word with a reflection but not its meaning ("the deploy date of
 *     the James Webb telescope", "Kafka's Metamorphosis").
 *
 * Do not tune this set against the figures. It is for calibration and measurement: a
 * request edited until it passes, or a reflection reworded to match its requests, turns
 * the figures into a description of the set. When the set must grow, write the new
 * entries the same way, before running them, and keep the old ones as they are.
 *
 * Sizes (checked by test/bench/injection-eval.test.ts): 52 reflections (25 factual,
 * 27 procedural), 90 needing requests (49 paraphrase, 41 direct; every reflection needed
 * at least once), 80 unrelated requests (26 programming, 18 other topics, 9 small talk,
 * 27 near misses).
 * One data file rather than several: the entries are only read together, and the
 * reflections sit next to the requests that need them for review.
 */

export interface SetReflection {
  /** Stable name in this set (the store's ids are content hashes). */
  id: string;
  kind: 'factual' | 'procedural';
  topic: string;
  content: string;
}

export interface NeedingRequest {
  /** The id of the one reflection this request needs. */
  needs: string;
  /** `paraphrase`: little word overlap with the reflection; `direct`: names what it asks about. */
  phrasing: 'paraphrase' | 'direct';
  text: string;
}

export type UnrelatedKind = 'programming' | 'other-topic' | 'small-talk' | 'near-miss';

export interface UnrelatedRequest {
  kind: UnrelatedKind;
  text: string;
}

const factual = (id: string, topic: string, content: string): SetReflection => ({ id, kind: 'factual', topic, content });
const procedural = (id: string, topic: string, content: string): SetReflection => ({ id, kind: 'procedural', topic, content });

export const REFLECTIONS: readonly SetReflection[] = [
  // Where things live, who owns what.
  factual('local-ports', 'local development', 'Local dev ports: api-gateway listens on 8080, the web app on 5173, shipment-tracker on 8082 and Postgres on 5433 (not 5432, so it does not clash with a system Postgres).'),
  factual('env-file', 'configuration', 'Local environment variables live in .env.local at the repo root, copied from .env.example; code reads them through packages/config/src/env.ts, never from process.env directly.'),
  factual('grafana', 'observability', "Production dashboards are in Grafana at grafana.internal.tidewater.io, folder Shipments; the gateway latency board is 'api-gateway / p99'."),
  factual('billing-owner', 'ownership', 'Marta Okafor owns billing-svc; changes to invoices or tax need her review on the PR.'),
  factual('feature-flags', 'feature flags', 'Feature flags are defined in config/flags.yaml and served by flagd; every flag needs a default for each environment or flagd refuses to start.'),
  factual('api-docs', 'api', 'The public API reference is served by Redoc at http://localhost:8080/docs locally and https://api.tidewater.io/docs in production.'),
  factual('ci', 'ci', 'CI runs on Buildkite (.buildkite/pipeline.yml); the slow end-to-end suite runs only on main and on PRs labelled run-e2e.'),
  factual('vault-secrets', 'secrets', 'Staging and prod secrets are in Vault under secret/tidewater/<env>/<service>; `make secrets-pull ENV=staging` writes them into .env.local.'),
  factual('loki-logs', 'observability', 'Production logs are in Loki: query them in Grafana Explore with {app="shipment-tracker", env="prod"}; they are kept for 14 days.'),
  factual('kafka-topic', 'messaging', 'Shipment events go through the Kafka topic shipments.events.v2; the notifier consumes them as consumer group notifier-prod.'),
  factual('oncall', 'on-call', "The on-call rota is the PagerDuty schedule 'Tidewater Platform'; a page unacknowledged for 15 minutes escalates to Dev Patel."),
  factual('migrations-dir', 'database', 'Database migrations are SQL files in services/api-gateway/migrations, applied with `pnpm db:migrate` (dbmate underneath).'),
  factual('staging-url', 'environments', 'Staging is https://staging.tidewater.io; it deploys automatically from main about 10 minutes after a merge.'),
  factual('design-tokens', 'frontend', 'Design tokens (colours, spacing, radii) come from packages/ui/tokens.json; Tailwind reads them through apps/web/tailwind.config.ts.'),
  factual('error-codes', 'api', 'API error codes are catalogued in services/api-gateway/src/errors/catalog.ts; each has a stable code like TW-4031, documented in docs/errors.md.'),
  factual('test-runner', 'testing', 'Unit tests use Vitest (`pnpm test`); the Playwright end-to-end tests live in e2e/ and run with `pnpm e2e`.'),
  factual('cronjobs', 'scheduled jobs', 'Nightly jobs (invoice generation at 02:00 UTC, data export at 03:30 UTC) are Kubernetes CronJobs in deploy/k8s/cronjobs/.'),
  factual('seed-data', 'database', 'Local seed data is in db/seed/*.sql; `pnpm db:seed` loads three demo customers and about 500 shipments.'),
  factual('mapbox', 'maps', 'Maps come from Mapbox: the server uses MAPBOX_TOKEN, while the web app uses a separate URL-restricted public token, VITE_MAPBOX_PUBLIC_TOKEN.'),
  factual('adr', 'architecture', 'Architecture decisions are recorded as numbered ADRs in docs/adr/; ADR-0012 explains why we chose Kafka over RabbitMQ.'),
  factual('sentry', 'observability', 'Errors are reported to Sentry: project tidewater-web for the frontend, tidewater-api for the backend; the release name is the git SHA.'),
  factual('node-version', 'tooling', 'The repo pins Node 20.11 in .nvmrc and pnpm 8.15 through packageManager in package.json; enable corepack to get the right pnpm.'),
  factual('rate-limit', 'api', 'The api-gateway allows 600 requests per minute per API key (RATE_LIMIT_PER_MIN, in services/api-gateway/src/middleware/rate-limit.ts).'),
  factual('s3-pod', 'storage', 'Proof-of-delivery photos are uploaded to the S3 bucket tw-pod-photos-prod (eu-west-1); staging uses tw-pod-photos-staging.'),
  factual('email-templates', 'notifications', 'Email templates are MJML files in services/notifier/templates; preview them with `pnpm --filter notifier preview` at localhost:3030.'),

  // How to build, test, deploy, release; mistakes to avoid.
  procedural('cache-before-build', 'build', 'The Redis cache must be up before `pnpm build` (pages are prerendered from it): start it with `docker compose up -d cache`.'),
  procedural('migration-dry-run', 'database', 'Never run migrations against prod without `pnpm db:migrate --dry-run` first and a review of the printed SQL: a failed migration locks the shipments table.'),
  procedural('release', 'release', 'Release by running `pnpm release`: it bumps the version, writes CHANGELOG.md and pushes a vX.Y.Z tag, which triggers the production deploy. Never create release tags by hand.'),
  procedural('deploy-window', 'release', 'No production deploys on Fridays after 14:00 or during a freeze announced in #releases; otherwise ask the release captain.'),
  procedural('regen-client', 'api', "After changing openapi/gateway.yaml, run `pnpm gen:client` and commit the regenerated packages/api-client, or CI fails the 'client is stale' check."),
  procedural('pnpm-add', 'tooling', 'Add dependencies with `pnpm add --filter <package>` from the repo root, never `npm install` inside a package: it creates a package-lock.json and the frozen-lockfile install in CI fails.'),
  procedural('flaky-e2e', 'testing', 'e2e/tracking-map.spec.ts is flaky on CI because map tiles load slowly: retry the job once before investigating, and tell QA before quarantining it.'),
  procedural('kafka-local', 'local development', 'To run the notifier locally, start Kafka first with `docker compose up -d kafka zookeeper`, then create the topics with ./scripts/kafka-topics.sh.'),
  procedural('flag-removal', 'feature flags', 'To remove a feature flag, first delete its uses in code and deploy, then remove it from config/flags.yaml in a second PR: removing it from the file first breaks running pods.'),
  procedural('hotfix', 'release', 'Hotfixes branch from the latest release tag, not main, as hotfix/<ticket>; after releasing, cherry-pick the fix onto main.'),
  procedural('db-reset', 'database', 'If local migrations get out of sync, `pnpm db:reset` drops, recreates and reseeds the local database; never run it with a remote DATABASE_URL.'),
  procedural('rollback', 'release', 'To roll back production run ./scripts/rollback.sh <previous-tag>: it redeploys the old image but does not revert migrations, so check for schema changes first.'),
  procedural('pr-titles', 'workflow', 'PR titles must follow Conventional Commits (feat:, fix:, chore:) because the changelog is generated from them; the title check blocks merging otherwise.'),
  procedural('utc-timestamps', 'data', "Store every timestamp in UTC (timestamptz) and convert only in the UI, with the customer's timezone from their account settings; warehouse reports broke when local times were stored."),
  procedural('money-cents', 'data', 'Money is integer cents (bigint) everywhere: never use floats for amounts, and round only when rendering, with formatMoney() from packages/shared/money.ts.'),
  procedural('kube-context', 'kubernetes', 'Before any kubectl command, check `kubectl config current-context`: the prod context is tw-prod-euw1, staging is tw-staging-euw1.'),
  procedural('api-versioning', 'api', 'Breaking changes to the public API go into a new /v3 route; /v2 must keep working for six months after a deprecation notice in docs/changelog-api.md.'),
  procedural('storybook', 'frontend', 'Every new UI component needs a Storybook story (packages/ui/src/**/*.stories.tsx); Chromatic fails the PR for a component without one.'),
  procedural('i18n', 'frontend', 'User-facing strings go through t() with keys in apps/web/locales/en.json; run `pnpm i18n:extract` before opening a PR or the Lokalise sync drops the new keys.'),
  procedural('webhook-signing', 'api', "Outgoing webhooks are signed with HMAC-SHA256 using the customer's webhook secret, in the X-Tidewater-Signature header; customers reject unsigned calls."),
  procedural('load-tests', 'performance', 'Load tests (k6 scripts in perf/) target staging only, never prod, and must be announced in #platform first: they saturate the shared Postgres.'),
  procedural('docker-platform', 'containers', "On Apple Silicon, build service images with `docker buildx build --platform linux/amd64`: arm64 images crash on the prod nodes with 'exec format error'."),
  procedural('debug-tracker', 'local development', "To debug shipment-tracker locally, start it with `pnpm --filter shipment-tracker dev:debug` and attach VS Code to port 9229 (launch config 'Attach tracker')."),
  procedural('gps-sim', 'testing', 'To test the live map without real trucks, run scripts/simulate-gps.ts with a shipment id: it replays recorded GPS tracks for that shipment.'),
  procedural('pii-logs', 'security', 'Never log customer addresses, phone numbers or emails: wrap them in redact() from packages/shared/log.ts; the PII scanner in CI fails the build on known patterns.'),
  procedural('staging-db', 'database', 'Staging Postgres is reachable only through the bastion: `ssh -L 5434:staging-db.internal:5432 bastion.tidewater.io`, then connect to localhost:5434 as the readonly user.'),
  procedural('pricing-cache', 'billing', 'After changing a pricing rule, flush the pricing cache with `pnpm --filter billing-svc cache:flush`; otherwise quotes keep the old prices for up to an hour.'),
];

const paraphrase = (needs: string, text: string): NeedingRequest => ({ needs, phrasing: 'paraphrase', text });
const direct = (needs: string, text: string): NeedingRequest => ({ needs, phrasing: 'direct', text });

export const NEEDING: readonly NeedingRequest[] = [
  direct('local-ports', "What port is the local Postgres on? psql on 5432 says connection refused and I'm sure docker is up."),
  paraphrase('local-ports', "I've got the frontend open in the browser, but which localhost address should it call for the backend?"),

  direct('env-file', 'I read STRIPE_WEBHOOK_URL from process.env in the billing handler and the reviewer complained. Where are env vars supposed to be read?'),
  paraphrase('env-file', "Fresh clone, nothing starts because settings are missing. Is there a template I'm meant to duplicate for my machine's configuration?"),

  direct('grafana', "Where's the Grafana dashboard for api-gateway latency?"),
  paraphrase('grafana', 'Customers say things feel sluggish since this morning. Where can I look at response-time graphs for prod?'),

  direct('billing-owner', 'Who owns billing-svc? I need a reviewer for my change to the invoice PDF.'),
  paraphrase('billing-owner', "I'm tweaking how VAT is calculated on customer statements. Whose sign-off do I need before merging?"),

  direct('feature-flags', 'Where do I add a new feature flag for the bulk-upload screen?'),
  paraphrase('feature-flags', 'I want the half-finished bulk upload page hidden for everyone except our test accounts. How do we usually switch unfinished screens on and off here?'),

  paraphrase('api-docs', "A customer's integrator wants a link to our endpoint documentation. What do I send them?"),

  direct('ci', "Why didn't the e2e tests run on my PR in Buildkite?"),
  paraphrase('ci', 'My pull request went green but the browser tests never even started. How do I make them execute before I merge?'),

  direct('vault-secrets', 'How do I get the staging secrets into my .env.local?'),
  paraphrase('vault-secrets', 'I need the real Stripe key that pre-production uses so I can reproduce a bug on my laptop. Where do we keep credentials like that?'),

  direct('loki-logs', 'How do I search the prod logs for shipment-tracker? I need what it logged yesterday around 18:00.'),
  paraphrase('loki-logs', 'A customer says their parcel status froze two days ago. How can I see what the tracking service printed out back then?'),

  direct('kafka-topic', "What's the Kafka topic for shipment events, and which consumer group does the notifier use?"),
  paraphrase('kafka-topic', 'Notifications stopped going out an hour ago. Which stream does the notification service read from, and under what group name, so I can check how far behind it is?'),

  direct('oncall', 'Which PagerDuty schedule is the on-call rota for the platform?'),
  paraphrase('oncall', "Who do I wake up at 3am if the site goes down and the person carrying the pager isn't answering?"),

  direct('migrations-dir', 'Where do I put a new migration that adds an eta column to shipments?'),
  paraphrase('migrations-dir', 'I need an index on customer_id in the orders table. Where do schema changes go in this repo and how are they applied?'),

  direct('staging-url', "What's the staging URL? And does it update by itself after a merge?"),
  paraphrase('staging-url', 'I merged my fix twenty minutes ago. When will QA be able to try it in the pre-prod environment, and at what address?'),

  paraphrase('design-tokens', 'Marketing wants the brand blue slightly darker across the whole app. Where is that shade defined?'),

  direct(
    'error-codes',
    `A customer got this response from us:

{"error":{"code":"TW-4097","message":"Shipment cannot be modified in state DELIVERED","request_id":"req_8f2a1c"}}

Where are these error codes defined? I want to add a new one for cancelled shipments.`,
  ),

  direct('test-runner', 'How do I run the unit tests for the whole repo?'),
  paraphrase('test-runner', 'I want to run only the checks that click through the app in a real browser, on my machine, before pushing. What command is it?'),

  paraphrase('cronjobs', "Last night's invoices were never produced. What kicks that batch off, and at what time does it normally fire?"),
  direct('cronjobs', 'Where are the nightly CronJobs defined? I need to move the data export an hour later.'),

  paraphrase('seed-data', "My local app is completely empty, there's nothing to click on. Is there a way to fill it with some fake customers and parcels?"),

  direct(
    'mapbox',
    `The tracking map shows a grey box and the browser console says:

Error: An API access token is required to use Mapbox GL. See https://docs.mapbox.com/api/overview/#access-tokens
    at new Map (mapbox-gl.js:33:10521)
    at TrackingMap (TrackingMap.tsx:27:17)

Which token should the web app be using?`,
  ),

  direct('adr', 'Why did we pick Kafka over RabbitMQ? Is that written down somewhere?'),
  paraphrase('adr', 'Is there a record somewhere of the big technical choices the team made, and the reasoning behind them?'),

  direct('sentry', 'Which Sentry project do backend exceptions go to?'),
  paraphrase('sentry', 'A user hit a crash on the shipments page around 14:05. Where would I find the captured exception with its stack?'),

  direct(
    'node-version',
    ` ERR_PNPM_BAD_PM_VERSION  This project is configured to use v8.15.4 of pnpm. Your current pnpm is v9.1.0

If you want to bypass this version check, you can set the "package-manager-strict" configuration to "false" or set the "COREPACK_ENABLE_STRICT" environment variable to "0"

how do I fix this properly?`,
  ),
  paraphrase('node-version', 'Which JavaScript runtime release should I install to work on this repo? I have 18 from another project.'),

  paraphrase('rate-limit', "A partner keeps getting HTTP 429 from us during their nightly sync. What's the cap, and where is it configured?"),

  paraphrase('s3-pod', "The driver says he took a picture at the doorstep when he dropped the parcel off, but support can't find it. Where do those images end up?"),
  direct('s3-pod', "What's the S3 bucket for proof-of-delivery photos on staging?"),

  direct('email-templates', 'Where are the email templates? I need to change the wording of the shipment delayed email.'),
  paraphrase('email-templates', "How can I see what the 'your parcel is running late' message will look like in someone's inbox before I change its text?"),

  paraphrase('cache-before-build', 'Compiling the web app falls over halfway with a connection refused on port 6379. What am I supposed to have running first?'),
  direct(
    'cache-before-build',
    `$ pnpm build
> @tidewater/web@4.1.0 build /Users/sam/src/tidewater/apps/web
> vite build && node scripts/prerender.mjs

vite v5.2.8 building for production...
✓ 1843 modules transformed.
dist/index.html                   0.61 kB │ gzip:   0.38 kB
dist/assets/index-4f1c2a9b.css   48.22 kB │ gzip:   8.91 kB
dist/assets/index-9a7e11d0.js   912.40 kB │ gzip: 268.33 kB
✓ built in 14.21s
[prerender] loading page data for 212 routes
Error: connect ECONNREFUSED 127.0.0.1:6379
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)
    at RedisSocket._RedisSocket_connect (/Users/sam/src/tidewater/node_modules/.pnpm/@redis+client@1.5.14/node_modules/@redis/client/dist/lib/client/socket.js:177:71)
    at async Commander.connect (/Users/sam/src/tidewater/node_modules/.pnpm/@redis+client@1.5.14/node_modules/@redis/client/dist/lib/client/index.js:185:9)
    at async loadPageData (file:///Users/sam/src/tidewater/apps/web/scripts/prerender.mjs:41:3)
    at async main (file:///Users/sam/src/tidewater/apps/web/scripts/prerender.mjs:88:18) {
  errno: -61,
  code: 'ECONNREFUSED',
  syscall: 'connect',
  address: '127.0.0.1',
  port: 6379
}
 ELIFECYCLE  Command failed with exit code 1.

the build worked yesterday, what changed?`,
  ),

  direct('migration-dry-run', "I'm about to run pnpm db:migrate on prod for the new eta index. Anything I should do first?"),
  paraphrase('migration-dry-run', "My schema change is approved, I'm going to apply it to the live database now, ok?"),

  direct('release', 'How do I cut a release? Do I tag it myself?'),
  paraphrase('release', "This sprint's work is ready for customers. What's our procedure for shipping a new version out?"),

  paraphrase('deploy-window', "It's Friday, 4pm, and I have a small fix ready. Can I push it live now?"),
  direct('deploy-window', 'Are there times when we should not deploy to production?'),

  direct(
    'regen-client',
    `CI fails on my PR with:

--- check-client ---
✖ packages/api-client is stale: openapi/gateway.yaml changed but the client was not regenerated
🚨 Error: The command exited with status 1

what should I run?`,
  ),
  paraphrase('regen-client', 'I added a field to the shipment response in the spec, but the frontend still does not see it in its typed SDK. What step am I missing?'),

  direct('pnpm-add', 'How do I add zod as a dependency of the notifier package?'),
  paraphrase('pnpm-add', "I'd like to pull in a date library for the notification service. What's the right way to bring in a third-party module here?"),

  direct(
    'flaky-e2e',
    `Buildkite e2e step failed on my branch:

  1) [chromium] › tracking-map.spec.ts:42:5 › tracking map › shows the truck position

    TimeoutError: locator.waitFor: Timeout 10000ms exceeded.
    Call log:
      - waiting for locator('[data-testid="truck-marker"]') to be visible

  1 failed
  211 passed (4.3m)

I didn't touch anything map-related. Should I dig into this?`,
  ),

  paraphrase('kafka-local', "The notification service crashes on my laptop right at startup, saying it can't reach the broker. What am I supposed to have running?"),
  direct('kafka-local', 'How do I run the notifier locally?'),

  paraphrase('flag-removal', "The bulk upload toggle has been on for everyone for a month, so I'd like to clean it out. Can I do it all in one PR?"),

  direct('hotfix', 'Which branch should a hotfix start from?'),
  paraphrase('hotfix', 'Prod has a nasty bug, but main already contains half-done work for next month. How do I get just a quick correction out?'),

  direct(
    'db-reset',
    `Error: dbmate: migration 20240611093012_add_eta.sql: pq: relation "shipment_eta" already exists

my local DB is a mess after switching branches, how do I start over?`,
  ),
  paraphrase('db-reset', 'After hopping between branches my local tables are in a weird state. Easiest way to wipe everything and begin from scratch?'),

  paraphrase('rollback', 'The version that went out an hour ago is breaking checkout for everyone. How do we get back to the one before, fast?'),
  direct('rollback', 'How do I roll back prod to the previous tag?'),

  direct('pr-titles', "GitHub won't let me merge: the PR title check is red. What does it want?"),
  paraphrase('pr-titles', 'Is there a naming convention I should follow when I open a pull request here?'),

  paraphrase('utc-timestamps', "I'm adding a 'delivered at' column. Should I save it in the customer's local time so it displays right?"),

  paraphrase('money-cents', 'For the new discount feature, can I keep the price as 19.99 in a JS number and multiply it by 0.9?'),
  direct('money-cents', 'What type should I use for invoice amounts in the database?'),

  direct('kube-context', 'I need to restart the notifier pods on staging with kubectl rollout restart. Anything to check first?'),
  paraphrase('kube-context', "I'm about to delete a stuck pod in the cluster. What should I double-check so I don't hit the wrong one?"),

  paraphrase('api-versioning', 'I want to rename the `eta` field in the shipment response to `estimated_arrival`. Can I just change it?'),

  direct('storybook', 'The Chromatic check failed on my PR that adds a DatePicker component. Why?'),
  paraphrase('storybook', "I've built a new dropdown widget for the shared component library. Is there anything else I need to add besides the widget itself?"),

  paraphrase('i18n', 'The German team says the new button on the settings page shows up in English for them. What did I forget?'),
  direct('i18n', 'How do I add a translated string to the web app?'),

  direct('webhook-signing', "I'm adding a new webhook event, shipment.cancelled. Anything special about how we send webhooks?"),
  paraphrase('webhook-signing', 'An integrator asks how they can be sure the callbacks they receive really come from us. What do we do on our side?'),

  paraphrase('load-tests', "I'd like to hammer the tracking endpoint with a few thousand virtual users to see where it breaks. Can I point the script at production?"),

  direct(
    'docker-platform',
    `$ kubectl logs shipment-tracker-7c9f6d5b8-x2k4q -n tracker
exec /usr/local/bin/docker-entrypoint.sh: exec format error

$ kubectl describe pod shipment-tracker-7c9f6d5b8-x2k4q -n tracker
Name:             shipment-tracker-7c9f6d5b8-x2k4q
Namespace:        tracker
Priority:         0
Service Account:  shipment-tracker
Node:             ip-10-42-17-201.eu-west-1.compute.internal/10.42.17.201
Start Time:       Tue, 11 Jun 2024 09:14:02 +0200
Labels:           app=shipment-tracker
                  pod-template-hash=7c9f6d5b8
Status:           Running
Containers:
  shipment-tracker:
    Image:          registry.tidewater.io/shipment-tracker:sam-manual-0611
    Image ID:       registry.tidewater.io/shipment-tracker@sha256:2f0c8e7b1d
    Port:           8082/TCP
    State:          Waiting
      Reason:       CrashLoopBackOff
    Last State:     Terminated
      Reason:       Error
      Exit Code:    1
    Ready:          False
    Restart Count:  6
Events:
  Type     Reason   Age                 From     Message
  ----     ------   ----                ----     -------
  Normal   Pulled   4m (x6 over 9m)     kubelet  Container image "registry.tidewater.io/shipment-tracker:sam-manual-0611" already present on machine
  Warning  BackOff  2m (x25 over 9m)    kubelet  Back-off restarting failed container shipment-tracker in pod shipment-tracker-7c9f6d5b8-x2k4q

I built this image by hand on my MacBook and pushed it. What's wrong with it?`,
  ),
  paraphrase('docker-platform', "I'm on an M2 laptop and need to produce a container for the tracker by hand this once. Any gotcha?"),

  paraphrase('debug-tracker', "I want to set breakpoints and step through the tracker's ETA calculation. How do I hook my editor up to it?"),

  paraphrase('gps-sim', 'How can I watch the truck icon move around on the tracking page without an actual vehicle on the road?'),

  paraphrase('pii-logs', "To debug a delivery issue I want to print the whole recipient object in the tracker's output. Is that ok?"),
  direct(
    'pii-logs',
    `The pii-scan step failed on my PR:

  services/notifier/src/send.ts:58  logger.info(\`sending to \${customer.email}\`)  -> matches pattern: email
  1 finding, failing build

what do I do about it?`,
  ),

  direct('staging-db', 'How do I connect to the staging Postgres database?'),
  paraphrase('staging-db', "I need to run a quick SELECT against pre-prod data to check one customer's record. How do I get in?"),

  paraphrase('pricing-cache', 'I updated the surcharge for oversized parcels, but new quotes still show the old amount. Why?'),
];

const programming = (text: string): UnrelatedRequest => ({ kind: 'programming', text });
const otherTopic = (text: string): UnrelatedRequest => ({ kind: 'other-topic', text });
const smallTalk = (text: string): UnrelatedRequest => ({ kind: 'small-talk', text });
const nearMiss = (text: string): UnrelatedRequest => ({ kind: 'near-miss', text });

export const UNRELATED: readonly UnrelatedRequest[] = [
  programming('In Rust, why does the borrow checker complain when I push to a Vec while holding a reference to one of its elements?'),
  programming('How do I pivot a pandas DataFrame so that each month becomes a column?'),
  programming("What's the idiomatic way to stop a goroutine in Go when the request's context is cancelled?"),
  programming("Write a SQL query that returns each employee's salary next to the average salary of their department, using a window function."),
  programming('CSS grid: how do I make the sidebar a fixed 250px and let the content take the rest?'),
  programming('Explain the difference between map and flatMap on Java streams, with an example.'),
  programming('What is a monad? Explain it for someone who knows JavaScript promises.'),
  programming('Bash: loop over all the .JPG files in a folder and rename them to lower case.'),
  programming('How do I reverse a singly linked list in C without recursion?'),
  programming("In Swift, what's the difference between passing a struct and a class to a function?"),
  programming('What is the worst-case complexity of a hash map lookup, and why?'),
  programming('In TypeScript, how do I write a type that makes every property optional except `id`?'),
  programming('How do I debounce a search input in React with hooks?'),
  programming("What's the difference between TCP and UDP, in a few sentences?"),
  programming('Kotlin coroutines: when should I use Dispatchers.IO rather than Dispatchers.Default?'),
  programming('Write a regular expression that matches an ISO 8601 date like 2024-03-15.'),
  programming('Explain how git rebase differs from git merge, with a small diagram.'),
  programming("Haskell: why is foldl considered harmful compared with foldl'?"),
  programming('How do I set up a virtualenv and install the requirements for a Django project?'),
  programming('In C#, what does ConfigureAwait(false) actually do?'),
  programming('Give me a quick introduction to pattern matching in Elixir.'),
  programming('What does the volatile keyword mean in Java?'),
  programming('How can I profile a slow Python script to see which function takes the time?'),
  programming(`Traceback (most recent call last):
  File "scrape.py", line 12, in <module>
    soup = BeautifulSoup(resp.text, "html.parser")
NameError: name 'BeautifulSoup' is not defined

what's going on?`),
  programming(`error[E0382]: borrow of moved value: \`config\`
  --> src/main.rs:14:20
   |
11 |     let config = load_config();
   |         ------ move occurs because \`config\` has type \`Config\`, which does not implement the \`Copy\` trait
12 |     let server = Server::new(config);
   |                              ------ value moved here
13 |
14 |     println!("{:?}", config.port);
   |                      ^^^^^^^^^^^ value borrowed here after move

how do I fix this without cloning everything?`),
  programming('Can you explain what a closure is in Python, with a counter example?'),

  otherTopic('Give me a recipe for a vegetarian lasagne for six people.'),
  otherTopic('Write a short poem about autumn rain in a city.'),
  otherTopic("I'm planning a week in Portugal in May, Lisbon and Porto. Can you suggest an itinerary?"),
  otherTopic('What is the integral of x squared times e to the x?'),
  otherTopic('Is 221 a prime number?'),
  otherTopic('Summarise the causes of the First World War in one paragraph.'),
  otherTopic('How long should I boil an egg for a runny yolk?'),
  otherTopic('Suggest a few names for my new golden retriever puppy.'),
  otherTopic("What's the capital of Australia?"),
  otherTopic('Help me write a polite email to my landlord about a heater that stopped working.'),
  otherTopic('What are some good stretches for lower back pain after sitting all day?'),
  otherTopic("Translate 'where is the train station?' into Japanese."),
  otherTopic('Explain the Monty Hall problem.'),
  otherTopic('Recommend three science fiction novels similar to The Left Hand of Darkness.'),
  otherTopic('How much will 10,000 grow to in 10 years at 3% interest compounded yearly?'),
  otherTopic("What's the difference between weather and climate?"),
  otherTopic('How many grams are in a cup of flour?'),
  otherTopic('Write a haiku about a cat asleep in the sun.'),

  smallTalk('hi!'),
  smallTalk('thanks, that worked'),
  smallTalk('good morning, how are you today?'),
  smallTalk('ok'),
  smallTalk('lol nice'),
  smallTalk('Can you keep your answers shorter from now on?'),
  smallTalk("you're a lifesaver, thank you"),
  smallTalk("Let's take a break, I'll be back after lunch."),
  smallTalk('What can you help me with?'),

  nearMiss("What was the deploy date of the James Webb Space Telescope?"),
  nearMiss('When is the release date of the next Zelda game?'),
  nearMiss('How do I flush a radiator in an old house?'),
  nearMiss('Tell me about the cache of Roman coins found in Somerset.'),
  nearMiss('Why do migrating birds follow the same routes every year?'),
  nearMiss("What's the busiest port in Europe, Rotterdam or Antwerp?"),
  nearMiss("An engine-shaped warning light came on on my car's dashboard. Is it safe to keep driving?"),
  nearMiss("Summarise Kafka's The Metamorphosis."),
  nearMiss('What was the highest-scoring vault in Olympic gymnastics history?'),
  nearMiss('How do I roll out pizza dough without it shrinking back?'),
  nearMiss("What's the format of a Royal Mail parcel tracking number?"),
  nearMiss('Which whales can I see migrating off the coast of Iceland in June?'),
  nearMiss("My kid's school sends a newsletter email every week. How do I set up a Gmail filter to label it?"),
  nearMiss('How do I change the time zone on my Casio watch?'),
  nearMiss('How much does it cost to ship a parcel from London to Berlin?'),
  nearMiss('What is a good flag football play for a team of ten-year-olds?'),
  nearMiss('Who is the current owner of Chelsea football club?'),
  nearMiss('Is a bigger CPU cache worth it for gaming?'),
  nearMiss('How do I read secrets from Azure Key Vault in a .NET 8 app?'),
  nearMiss('In GitLab CI, how do I cache node_modules between jobs?'),
  nearMiss('How do I set up logrotate on Ubuntu to rotate nginx logs daily?'),
  nearMiss("What's the rate limit of the GitHub REST API for authenticated users?"),
  nearMiss("My grandmother's recipe says to 'seed' the tomatoes. What does that mean?"),
  nearMiss("What's the migration path from Vue 2 to Vue 3?"),
  nearMiss('What does ROLLBACK do inside a Postgres transaction?'),
  nearMiss('Why does 0.1 + 0.2 not equal 0.3 in JavaScript?'),
  nearMiss('How do I release a pet fish into a pond safely, or should I not?'),
];

/**
 * The tags an extraction model wrote for each reflection, as Engram's extraction prompt
 * asks (`EXTRACTION_INSTRUCTIONS`, "tags"): written by an LLM given only that instruction
 * and the reflections above, never the requests, and not edited since. Reflections
 * learnt from conversations carry tags like these; ones stored on purpose may have none,
 * so the evaluation runs both ways.
 */
export const REFLECTION_TAGS: Readonly<Record<string, readonly string[]>> = {
  'local-ports': ["port already in use", "address in use error", "local server port numbers", "which port to open", "database port conflict", "dev server url", "frontend dev server"],
  'env-file': ["environment variables setup", "config settings", "missing env var", "dotenv file", "local setup", "read configuration", "new developer onboarding"],
  'grafana': ["monitoring dashboards", "metrics charts", "slow requests latency", "production performance", "observability", "service health graphs"],
  'billing-owner': ["code owner", "who to ask", "pull request reviewer", "invoice changes approval", "tax calculation", "payments service"],
  'feature-flags': ["feature toggle", "add new flag", "service fails to start", "per environment defaults", "gradual rollout", "flag server crash"],
  'api-docs': ["api reference documentation", "endpoint docs", "openapi spec viewer", "rest api documentation url", "swagger docs"],
  'ci': ["continuous integration pipeline", "build server", "e2e tests skipped", "trigger e2e tests", "pull request label", "ci configuration file"],
  'vault-secrets': ["secret manager", "get credentials", "api keys passwords", "staging environment config", "missing env vars", "fetch secrets locally"],
  'loki-logs': ["search production logs", "log aggregation", "debug production errors", "log retention", "where are logs", "log query"],
  'kafka-topic': ["message queue", "event stream", "pubsub topic name", "notifications not sent", "event consumer", "consumer lag"],
  'oncall': ["incident response", "who is on call", "alert escalation", "paging schedule", "production outage contact", "alert paging"],
  'migrations-dir': ["database schema changes", "add column", "create table", "apply sql changes", "db migrate", "schema migration tool"],
  'staging-url': ["test environment", "pre-production", "preview changes", "auto deploy after merge", "when changes go live", "qa environment"],
  'design-tokens': ["theme colors", "css styling", "brand palette", "spacing scale", "border radius", "utility css config"],
  'error-codes': ["error message lookup", "api error response", "add new error", "error code meaning", "error documentation", "exception catalog"],
  'test-runner': ["run unit tests", "test framework", "browser tests", "integration testing", "how to run tests", "test command"],
  'cronjobs': ["scheduled tasks", "nightly batch jobs", "invoice generation", "cron schedule", "background jobs", "data export timing"],
  'seed-data': ["demo data", "sample fixtures", "empty database", "populate local db", "test customers", "database fixtures"],
  'mapbox': ["map display", "map api key", "map not loading", "geolocation tiles", "frontend public token", "maps service credentials"],
  'adr': ["architecture decision records", "design rationale", "why message broker chosen", "technical decisions history", "design docs"],
  'sentry': ["error tracking", "exception monitoring", "crash reports", "frontend errors", "release tracking", "stack traces"],
  'node-version': ["wrong node version", "runtime version", "package manager version", "javascript runtime setup", "install errors", "unsupported engine"],
  'rate-limit': ["429 too many requests", "request throttling", "api quota", "requests per minute limit", "throttled client", "rate limiting middleware"],
  's3-pod': ["file storage bucket", "delivery photos", "image uploads", "object storage", "proof of delivery images", "cloud storage location"],
  'email-templates': ["email design", "notification emails", "preview email", "html email markup", "edit email content", "transactional emails"],
  'cache-before-build': ["build fails", "connection refused during build", "redis not running", "static prerender", "start cache container", "build prerequisites"],
  'migration-dry-run': ["production database migration", "table lock", "schema change safety", "preview sql", "migration failure", "db outage"],
  'release': ["ship new version", "deploy to production", "version bump", "changelog generation", "git tag", "semantic versioning"],
  'deploy-window': ["deploy freeze", "when can i deploy", "friday deploys", "release schedule", "change freeze", "deployment policy"],
  'regen-client': ["ci check failing", "client is stale", "generated sdk", "api spec change", "code generation", "typescript api client"],
  'pnpm-add': ["install dependency", "add npm package", "lockfile error", "frozen lockfile", "monorepo workspace", "ci install fails"],
  'flaky-e2e': ["flaky test", "intermittent test failure", "ci failing randomly", "browser test timeout", "map test", "quarantine test"],
  'kafka-local': ["message broker setup", "notifier not starting", "local event queue", "create topics", "docker containers", "local services setup"],
  'flag-removal': ["delete feature toggle", "cleanup old flag", "pods crash", "two step removal", "flag config change", "remove flag safely"],
  'hotfix': ["urgent production fix", "patch release", "bug fix branch", "emergency fix", "git branching", "backport fix"],
  'db-reset': ["migrations out of sync", "reset local database", "wipe database", "broken schema locally", "drop and recreate db", "migration errors"],
  'rollback': ["revert deploy", "undo release", "production incident", "bad deploy", "previous version", "schema incompatibility"],
  'pr-titles': ["pull request title format", "commit message convention", "merge blocked", "changelog entries", "title lint check", "semantic commits"],
  'utc-timestamps': ["timezone bugs", "date time storage", "wrong times shown", "time zone conversion", "datetime column", "local time display"],
  'money-cents': ["currency amounts", "rounding errors", "price formatting", "floating point money", "decimal precision", "display prices"],
  'kube-context': ["wrong cluster", "kubernetes cluster selection", "accidental prod change", "switch cluster", "k8s environment", "cli context"],
  'api-versioning': ["breaking change", "deprecate endpoint", "api backwards compatibility", "new api version", "deprecation period", "remove old endpoint"],
  'storybook': ["component documentation", "visual regression tests", "pr check failing", "new ui component", "component stories", "ui review"],
  'i18n': ["translations", "localization", "missing translation keys", "internationalization", "text strings", "translation sync"],
  'webhook-signing': ["webhook signature", "hmac verification", "callback security", "signed requests", "webhook rejected", "verify payload authenticity"],
  'load-tests': ["performance testing", "stress test", "benchmark traffic", "database overload", "capacity testing", "traffic simulation"],
  'docker-platform': ["exec format error", "m1 mac", "cpu architecture mismatch", "container crashes in prod", "cross platform build", "docker image build"],
  'debug-tracker': ["debugger attach", "breakpoints", "node inspector", "step through code", "local debugging", "ide debugger"],
  'gps-sim': ["fake location data", "vehicle tracking simulation", "test live map", "replay tracks", "location mock", "tracking test data"],
  'pii-logs': ["personal data logging", "sensitive information", "privacy compliance", "mask user data", "gdpr", "ci build fails pii"],
  'staging-db': ["connect to staging database", "ssh tunnel", "jump host", "remote db access", "port forwarding", "read only database user"],
  'pricing-cache': ["old prices shown", "stale quotes", "price change not applied", "clear cache", "cache invalidation", "pricing rules update"],
};
