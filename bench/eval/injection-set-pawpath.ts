/**
 * Held-out evaluation set for the reflection memory layer.
 *
 * How it was written: blind, on 2026-11-27, by a helper session (an LLM agent)
 * started from inside the project. It did not open /work/main, /work/wt-* or
 * /work/shared, so it saw neither the other evaluation set nor the retrieval
 * code, and it looked up and ran nothing about retrieval. Reflections and
 * requests were written by hand as a real team's memory and real developers'
 * messages would read, without tuning them to be easy or hard for any method.
 *
 * Invented project: Pawpath, by Hollowbrook Labs (Lisbon), is a SaaS for
 * veterinary clinics: front-desk scheduling, patient (animal) medical records,
 * lab-result intake from IDEXX, SMS/email reminders and clinic subscriptions.
 * It lives in the pnpm/Turborepo monorepo hollowbrook/pawpath with a Fastify
 * booking-api, a Go records-svc, a Python Celery notify-worker, a Next.js
 * frontdesk app and an Expo owner-mobile app, deployed to AWS with Terraform,
 * Helm and Argo CD.
 *
 * Sizes:
 *   REFLECTIONS: 55 (28 factual, 27 procedural)
 *   NEEDING:     123 (65 direct, 58 paraphrase); every reflection is needed
 *                2 times (42 reflections) or 3 times (13); 18 wrap pasted
 *                output or tool results (errors, stack traces, logs, diffs),
 *                10 of them agent-style loop inputs ("fix it", "continue",
 *                tool output plus a short question); 3 are several
 *                paragraphs long
 *   UNRELATED:   100 (30 programming, 20 other-topic, 10 small-talk,
 *                40 near-miss)
 */

export interface SetReflection { id: string; kind: 'factual' | 'procedural'; topic: string; content: string }
export interface NeedingRequest { needs: string; phrasing: 'paraphrase' | 'direct'; text: string }
export type UnrelatedKind = 'programming' | 'other-topic' | 'small-talk' | 'near-miss';
export interface UnrelatedRequest { kind: UnrelatedKind; text: string }

export const REFLECTIONS: readonly SetReflection[] = [
  // ---------------------------------------------------------------- factual
  {
    id: 'repo-layout',
    kind: 'factual',
    topic: 'monorepo layout',
    content:
      "The hollowbrook/pawpath monorepo keeps deployable services in `services/` (booking-api, records-svc, notify-worker), shared TypeScript packages in `packages/` (@pawpath/ui, @pawpath/schemas, @pawpath/db, @pawpath/logger), and the two front ends in `apps/frontdesk` (Next.js) and `apps/owner-mobile` (Expo).",
  },
  {
    id: 'local-dev-stack',
    kind: 'factual',
    topic: 'local development stack',
    content:
      "`pnpm dev:stack` at the repo root starts Postgres 15, Redis, RabbitMQ and MailHog from `ops/compose/dev.yml`; with it running, `pnpm dev` serves booking-api on port 4010 and frontdesk on port 3000.",
  },
  {
    id: 'staging-urls',
    kind: 'factual',
    topic: 'staging environment urls',
    content:
      "Staging frontdesk is https://staging.pawpath.vet and the staging booking-api is https://api.staging.pawpath.vet; Argo CD redeploys staging automatically on every merge to `main`.",
  },
  {
    id: 'db-migrations',
    kind: 'factual',
    topic: 'database migrations',
    content:
      "Database migrations are Drizzle SQL files in `packages/db/migrations/`; generate one from the schema in `packages/db/src/schema/` with `pnpm --filter @pawpath/db db:generate` and apply it with `pnpm --filter @pawpath/db db:migrate`.",
  },
  {
    id: 'records-svc-owner',
    kind: 'factual',
    topic: 'records-svc ownership',
    content:
      "Kwame Asante owns records-svc, and CODEOWNERS requires his review for anything under `proto/records/v1/`.",
  },
  {
    id: 'feature-flags',
    kind: 'factual',
    topic: 'feature flags',
    content:
      "Feature flags are served by the self-hosted Unleash at https://flags.pawpath.internal, with the server SDK token in `UNLEASH_API_TOKEN`; flag names are kebab-case and prefixed with the product area, e.g. `booking-waitlist-v2`.",
  },
  {
    id: 'secrets-doppler',
    kind: 'factual',
    topic: 'secrets management',
    content:
      "All service secrets live in the Doppler project `pawpath` with configs `dev`, `stg` and `prd`; locally, wrap commands as `doppler run --config dev -- pnpm dev` instead of keeping secrets in a `.env` file.",
  },
  {
    id: 'sentry-projects',
    kind: 'factual',
    topic: 'error tracking',
    content:
      "Errors are reported to the Sentry org `hollowbrook`, split into the projects `booking-api`, `frontdesk-web` and `owner-mobile`; each reads its DSN from `SENTRY_DSN` and tags the release with the git SHA.",
  },
  {
    id: 'grafana-dashboards',
    kind: 'factual',
    topic: 'dashboards and logs',
    content:
      "The on-call dashboard is 'Pawpath / Booking Golden Signals' at https://grafana.pawpath.internal/d/bk-golden, and service logs are in Loki, queried with labels like `{app=\"booking-api\", env=\"prd\"}`.",
  },
  {
    id: 'twilio-sms',
    kind: 'factual',
    topic: 'sms reminders',
    content:
      "Appointment reminder texts are sent by notify-worker through Twilio using the messaging service in `TWILIO_MESSAGING_SID`; the stg config uses Twilio test credentials, so staging never delivers real SMS.",
  },
  {
    id: 'idexx-webhook',
    kind: 'factual',
    topic: 'lab results integration',
    content:
      "IDEXX lab results arrive as webhooks at `POST /integrations/idexx/results` on records-svc and are matched to a patient through the `accession_id` column of the `lab_orders` table.",
  },
  {
    id: 'stripe-webhooks',
    kind: 'factual',
    topic: 'stripe webhooks',
    content:
      "Stripe subscription webhooks hit `POST /billing/stripe/webhook` on booking-api and are verified with `STRIPE_WEBHOOK_SECRET`; locally, forward them with `stripe listen --forward-to localhost:4010/billing/stripe/webhook` and use the `whsec_` secret it prints.",
  },
  {
    id: 'seed-data',
    kind: 'factual',
    topic: 'local seed data',
    content:
      "`pnpm db:seed` loads the fixture clinic 'Maple Street Vets' (3 vets, 40 patients, one week of appointments) from `packages/db/seed/fixtures/`; its front-desk login is `frontdesk@maple.test` with password `pawpath-dev`.",
  },
  {
    id: 'terraform-layout',
    kind: 'factual',
    topic: 'terraform layout',
    content:
      "AWS infrastructure is Terraform in `infra/terraform/`, with one root module per environment (`envs/stg`, `envs/prd`); state is kept in the S3 bucket `hb-pawpath-tfstate` and locked through the DynamoDB table `tf-locks`.",
  },
  {
    id: 'helm-values',
    kind: 'factual',
    topic: 'kubernetes deployment config',
    content:
      "Each service's Helm chart is in `deploy/charts/<service>`; per-environment overrides such as replicas and resource limits are in `deploy/values/stg/<service>.yaml` and `deploy/values/prd/<service>.yaml`, and the Argo CD Applications are declared in `deploy/argocd/apps.yaml`.",
  },
  {
    id: 'on-call-rotation',
    kind: 'factual',
    topic: 'on-call rotation',
    content:
      "On-call is the weekly PagerDuty schedule 'Pawpath Primary', handing over Mondays at 10:00 Europe/Lisbon; escalate to Priya Raman.",
  },
  {
    id: 'analytics-warehouse',
    kind: 'factual',
    topic: 'analytics warehouse',
    content:
      "Product events are exported nightly by the `export-events` Celery task into the BigQuery dataset `pawpath_analytics`; the dbt models built on it live in the separate repo `hollowbrook/pawpath-dbt`.",
  },
  {
    id: 'e2e-tests',
    kind: 'factual',
    topic: 'end-to-end tests',
    content:
      "End-to-end tests are Playwright specs in `apps/frontdesk/e2e/`, run with `pnpm --filter frontdesk test:e2e`; they need the dev stack up and the seed data loaded.",
  },
  {
    id: 'storybook',
    kind: 'factual',
    topic: 'component library',
    content:
      "Shared React components are in `@pawpath/ui` (`packages/ui`); `pnpm --filter @pawpath/ui storybook` runs Storybook on port 6006, and the published copy is at https://ui.pawpath.dev.",
  },
  {
    id: 'openapi-generation',
    kind: 'factual',
    topic: 'api schema and openapi',
    content:
      "Request and response shapes are zod schemas in `@pawpath/schemas`, and `services/booking-api/openapi.json`, which the mobile team reads, is generated from them with `pnpm --filter booking-api openapi:gen`.",
  },
  {
    id: 'mobile-builds',
    kind: 'factual',
    topic: 'mobile builds',
    content:
      "owner-mobile is built with EAS: `eas build --profile preview` makes internal QA builds and `--profile production` submits to TestFlight and Google Play internal testing. Ines Duarte administers the Apple Developer and Play Console accounts.",
  },
  {
    id: 'ci-required-checks',
    kind: 'factual',
    topic: 'ci pipeline',
    content:
      "CI is GitHub Actions in `.github/workflows/ci.yml` with Turborepo remote caching, and branch protection on `main` requires the checks `lint`, `typecheck`, `unit` and `e2e-frontdesk`.",
  },
  {
    id: 'time-storage',
    kind: 'factual',
    topic: 'appointment time storage',
    content:
      "Appointment times are stored as UTC `timestamptz`; each clinic's IANA zone is in `clinics.tz`, and conversion to local time happens only in the UI through `formatClinicTime()` from `@pawpath/ui`.",
  },
  {
    id: 'notify-worker',
    kind: 'factual',
    topic: 'notify-worker service',
    content:
      "notify-worker is a Python 3.12 Celery app in `services/notify-worker` that consumes the RabbitMQ queues `reminders`, `emails` and `exports`, with the broker URL in `CELERY_BROKER_URL`.",
  },
  {
    id: 'support-admin',
    kind: 'factual',
    topic: 'support admin tool',
    content:
      "Support uses the Retool app at https://admin.pawpath.internal to merge duplicate pet records and resend owner invites; it writes through booking-api's `/internal/admin/*` routes, not directly to the database.",
  },
  {
    id: 'release-notes',
    kind: 'factual',
    topic: 'release notes',
    content:
      "Customer-facing release notes are posted in the Slack channel `#pawpath-releases` and on https://pawpath.vet/changelog, written from the Changesets entries in `.changeset/`.",
  },
  {
    id: 'prod-db-access',
    kind: 'factual',
    topic: 'production database access',
    content:
      "Read-only access to the production database goes through Teleport: `tsh login --proxy=teleport.hollowbrook.io`, then `tsh db connect pawpath-prd-ro --db-user=readonly --db-name=pawpath`.",
  },
  {
    id: 'email-templates',
    kind: 'factual',
    topic: 'email templates',
    content:
      "Transactional emails are MJML templates in `services/notify-worker/templates/email/`, compiled with `make templates`; mail sent locally is caught by MailHog at http://localhost:8025.",
  },

  // ------------------------------------------------------------- procedural
  {
    id: 'release-process',
    kind: 'procedural',
    topic: 'production release',
    content:
      "Merging to `main` only ships to staging. To release to production, run `pnpm changeset version` on a `release/x.y.z` branch, merge it, then push a `vX.Y.Z` tag from `main`, because Argo CD deploys prod only from tags.",
  },
  {
    id: 'migrate-before-deploy',
    kind: 'procedural',
    topic: 'migration and deploy order',
    content:
      "Run the Drizzle migrations against an environment before deploying a booking-api image that uses the new columns; shipping the code first caused `column appointments.waitlist_position does not exist` errors in prod (PAW-1412).",
  },
  {
    id: 'use-pnpm',
    kind: 'procedural',
    topic: 'package manager',
    content:
      "Use pnpm 9 through `corepack enable`, never npm or yarn: `npm install` fails on the `workspace:*` dependencies and leaves a `package-lock.json` that must be deleted before rerunning `pnpm install`.",
  },
  {
    id: 'buf-generate',
    kind: 'procedural',
    topic: 'protobuf code generation',
    content:
      "After changing any `.proto` under `proto/records/v1/`, run `buf generate` at the repo root and commit the output in `services/records-svc/gen/`; the CI step fails with 'generated code is out of date' otherwise.",
  },
  {
    id: 'apple-silicon-docker',
    kind: 'procedural',
    topic: 'docker on apple silicon',
    content:
      "On Apple Silicon Macs build the records-svc image with `docker build --platform linux/amd64`, because the vendored IDEXX client only ships x86_64 binaries; an arm64 image crashes on start with `exec format error`.",
  },
  {
    id: 'e2e-timezone',
    kind: 'procedural',
    topic: 'e2e timezone pitfall',
    content:
      "Run Playwright through `pnpm --filter frontdesk test:e2e`, which sets `TZ=UTC`, rather than `npx playwright test` directly; otherwise calendar assertions fail with appointment times shifted by your local UTC offset.",
  },
  {
    id: 'celery-broker-rabbitmq',
    kind: 'procedural',
    topic: 'celery broker choice',
    content:
      "Keep RabbitMQ as notify-worker's Celery broker with `task_acks_late=True`; switching to Redis was tried in PAW-988 and silently lost reminder tasks whenever workers restarted.",
  },
  {
    id: 'stripe-test-clocks',
    kind: 'procedural',
    topic: 'testing subscription renewals',
    content:
      "To test subscription renewals, create and advance a Stripe test clock (`stripe test_helpers test_clocks create`, then `advance`) instead of faking the server time; faking the clock broke the JWT expiry checks in booking-api.",
  },
  {
    id: 'expo-public-env',
    kind: 'procedural',
    topic: 'expo environment variables',
    content:
      "In owner-mobile only variables prefixed `EXPO_PUBLIC_` are inlined into the bundle, and after editing `apps/owner-mobile/.env` you must restart Metro with `npx expo start -c`, or the old value stays cached.",
  },
  {
    id: 'terraform-via-atlantis',
    kind: 'procedural',
    topic: 'infrastructure changes',
    content:
      "Never run `terraform apply` locally for `envs/prd`; open a PR so Atlantis posts the plan, get Tomasz Wójcik's approval, then comment `atlantis apply -p prd`.",
  },
  {
    id: 'hotfix-process',
    kind: 'procedural',
    topic: 'hotfix process',
    content:
      "For a prod hotfix, branch `hotfix/PAW-<id>` from the latest `v*` tag rather than from `main`, add a patch changeset, tag the release from that branch, and then merge the branch back into `main` so the fix is not lost.",
  },
  {
    id: 'no-pii-in-logs',
    kind: 'procedural',
    topic: 'pii in logs',
    content:
      "Never log owner phone numbers, emails or addresses: pass request bodies through `redact()` from `@pawpath/logger` before logging them, since a PII leak into Loki (kept 30 days) led to the PAW-1207 incident review.",
  },
  {
    id: 'pr-title-format',
    kind: 'procedural',
    topic: 'pull request titles',
    content:
      "PR titles must be Conventional Commits with the Jira ticket as the scope, e.g. `feat(PAW-1530): reorder waitlist`, because the Changesets bot and the Jira integration parse them.",
  },
  {
    id: 'turbo-env-cache',
    kind: 'procedural',
    topic: 'turborepo cache and env vars',
    content:
      "When Turborepo replays a stale build after an environment variable changed, add the variable to `globalEnv` or the task's `env` list in `turbo.json`; `turbo run build --force` only bypasses the cache once.",
  },
  {
    id: 'enum-migration',
    kind: 'procedural',
    topic: 'postgres enum migrations',
    content:
      "Put `ALTER TYPE appointment_status ADD VALUE ...` in its own Drizzle migration, separate from anything that uses the new value; in the same migration Postgres fails with `unsafe use of new value \"no_show\" of enum type appointment_status`.",
  },
  {
    id: 'slot-row-lock',
    kind: 'procedural',
    topic: 'double booking prevention',
    content:
      "Keep the `SELECT ... FOR UPDATE` on the `vet_slots` row in `bookSlot()` in booking-api; removing it to cut lock waits brought back double bookings under load (PAW-1101).",
  },
  {
    id: 'records-svc-tests',
    kind: 'procedural',
    topic: 'records-svc tests',
    content:
      "Run records-svc tests with `make test` in `services/records-svc`, not bare `go test ./...`: the Makefile starts a testcontainers Postgres and sets `RECORDS_DB_URL`, and without it the store tests fail with `dial tcp 127.0.0.1:5433: connect: connection refused`.",
  },
  {
    id: 'staging-reset',
    kind: 'procedural',
    topic: 'resetting staging data',
    content:
      "To reset staging data, announce it in `#pawpath-dev` and run the 'Reset staging DB' workflow (`.github/workflows/reset-stg.yml`); never point `pnpm db:seed` at stg, because it truncates the `clinics` table.",
  },
  {
    id: 'idexx-rate-limit',
    kind: 'procedural',
    topic: 'idexx rate limit',
    content:
      "The IDEXX API allows 60 requests per minute per clinic, so poll lab-order status only from the `idexx-poll` job, never from request handlers; calling it on every page load got our account throttled with HTTP 429.",
  },
  {
    id: 'sentry-sourcemaps',
    kind: 'procedural',
    topic: 'sentry source maps',
    content:
      "Frontdesk errors in Sentry are only symbolicated when the `postbuild` step uploads source maps with `sentry-cli sourcemaps upload`, which needs `SENTRY_AUTH_TOKEN`; that token exists only in CI, so builds made locally always show minified stack traces.",
  },
  {
    id: 'i18n-sync',
    kind: 'procedural',
    topic: 'translations',
    content:
      "Add every new user-facing string to `locales/en.json` and use it through `t('...')`, then run `pnpm i18n:sync` to push the keys to Crowdin; skipping the sync makes the Portuguese and Spanish builds show raw keys.",
  },
  {
    id: 'flag-cleanup',
    kind: 'procedural',
    topic: 'feature flag cleanup',
    content:
      "Once a flag has been at 100% in prod for two weeks, delete its checks from the code and archive it in Unleash in the same PR; a forgotten `booking-waitlist-v1` stayed half-enabled for months.",
  },
  {
    id: 'kube-context-check',
    kind: 'procedural',
    topic: 'kubectl context',
    content:
      "Check `kubectl config current-context` before any kubectl command, because the prod context `pawpath-prd-euw1` is easy to leave active; switch with `kubectx pawpath-stg-euw1` for staging. Someone once scaled prod booking-api to zero this way.",
  },
  {
    id: 'ios-pods-sync',
    kind: 'procedural',
    topic: 'ios pods out of sync',
    content:
      "When the owner-mobile iOS build fails with 'The sandbox is not in sync with the Podfile.lock', run `npx expo prebuild --clean` and then `pod install` in `apps/owner-mobile/ios` instead of editing `Pods/` by hand.",
  },
  {
    id: 'api-versioning',
    kind: 'procedural',
    topic: 'api versioning',
    content:
      "Breaking changes to booking-api responses go under a new `/v2/` route while `/v1/` stays for at least one full owner-mobile release cycle, because owners on old app versions keep calling `/v1/`.",
  },
  {
    id: 'renovate-prs',
    kind: 'procedural',
    topic: 'dependency updates',
    content:
      "Merge Renovate dependency PRs only after `e2e-frontdesk` passes, and never take a `next` major bump from Renovate: the Next 15 bump broke the frontdesk auth middleware, so majors are done by hand.",
  },
  {
    id: 'rabbitmq-startup',
    kind: 'procedural',
    topic: 'rabbitmq local startup',
    content:
      "If notify-worker logs `Cannot connect to amqp://guest:**@localhost:5672//` right after `pnpm dev:stack`, RabbitMQ is still booting; wait for it with `docker compose -f ops/compose/dev.yml up -d --wait rabbitmq` instead of restarting the worker in a loop.",
  },
];

export const NEEDING: readonly NeedingRequest[] = [
  // repo-layout
  { needs: 'repo-layout', phrasing: 'direct', text: "is the frontdesk app under services/ or apps/? can't find it" },
  { needs: 'repo-layout', phrasing: 'paraphrase', text: "just joined the team. how is this codebase organised — where do the deployable things live vs the shared libraries?" },

  // local-dev-stack
  { needs: 'local-dev-stack', phrasing: 'paraphrase', text: "what's the one command that spins up all the backing databases and queues on my laptop?" },
  {
    needs: 'local-dev-stack',
    phrasing: 'direct',
    text: `$ pnpm --filter booking-api dev

> booking-api@0.41.0 dev /Users/lena/src/pawpath/services/booking-api
> tsx watch src/server.ts

[10:42:07.118] INFO (41233): loading config env=dev
[10:42:07.402] ERROR (41233): failed to connect to postgres
    err: {
      "type": "Error",
      "message": "connect ECONNREFUSED 127.0.0.1:5432",
      "stack":
          Error: connect ECONNREFUSED 127.0.0.1:5432
              at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1607:16)
      "errno": -61,
      "code": "ECONNREFUSED",
      "syscall": "connect",
      "address": "127.0.0.1",
      "port": 5432
    }
/Users/lena/src/pawpath/services/booking-api:
 ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL  booking-api@0.41.0 dev: \`tsx watch src/server.ts\`
Exit status 1

fix it`,
  },

  // staging-urls
  { needs: 'staging-urls', phrasing: 'direct', text: "whats the base url of booking-api on stg" },
  { needs: 'staging-urls', phrasing: 'paraphrase', text: "I merged my change an hour ago — where can I click around the pre-production site to check it?" },

  // db-migrations
  { needs: 'db-migrations', phrasing: 'direct', text: "how do i make a new migration in @pawpath/db after editing the schema?" },
  { needs: 'db-migrations', phrasing: 'paraphrase', text: "I added a column to one of the table definitions in TypeScript. how do I produce the SQL change for it and run it on my local database?" },

  // records-svc-owner
  { needs: 'records-svc-owner', phrasing: 'direct', text: "who needs to approve changes to proto/records/v1/lab_order.proto?" },
  { needs: 'records-svc-owner', phrasing: 'paraphrase', text: "who's the go-to person for the service that stores the animals' medical histories?" },

  // feature-flags
  { needs: 'feature-flags', phrasing: 'direct', text: "where does UNLEASH_API_TOKEN come from and what's the flag server's url?" },
  { needs: 'feature-flags', phrasing: 'paraphrase', text: "I want to put the new recurring-appointments screen behind a toggle so we can turn it on clinic by clinic. where are toggles managed and how should I name mine?" },

  // secrets-doppler
  { needs: 'secrets-doppler', phrasing: 'direct', text: "doppler run complains no config is selected, which one is for local dev?" },
  { needs: 'secrets-doppler', phrasing: 'paraphrase', text: "where do we keep the API keys and passwords for each environment, and how do I get them onto my machine?" },
  {
    needs: 'secrets-doppler',
    phrasing: 'paraphrase',
    text: `fresh clone, first time starting the api:

$ pnpm --filter booking-api dev
> booking-api@0.41.0 dev /Users/marta/code/pawpath/services/booking-api
> tsx watch src/server.ts

❌ Invalid environment variables:
  DATABASE_URL: Required
  JWT_SIGNING_KEY: Required
  STRIPE_SECRET_KEY: Required
  UNLEASH_API_TOKEN: Required
  SENTRY_DSN: Required
Error: Invalid environment variables
    at onValidationError (file:///Users/marta/code/pawpath/node_modules/.pnpm/@t3-oss+env-core@0.11.1/node_modules/@t3-oss/env-core/dist/index.js:32:15)

none of these are in any file in the repo. where am I supposed to get the values from?`,
  },

  // sentry-projects
  { needs: 'sentry-projects', phrasing: 'direct', text: "which sentry project do the owner-mobile crashes land in?" },
  { needs: 'sentry-projects', phrasing: 'paraphrase', text: "where do I go to see the exceptions the clinic web app threw in production last night?" },

  // grafana-dashboards
  { needs: 'grafana-dashboards', phrasing: 'direct', text: "link to the golden signals dashboard in grafana pls" },
  { needs: 'grafana-dashboards', phrasing: 'paraphrase', text: "a latency alert just paged me for the scheduling backend. where are the graphs, and where can I search its logs?" },

  // twilio-sms
  { needs: 'twilio-sms', phrasing: 'direct', text: "is twilio actually sending texts from stg? TWILIO_MESSAGING_SID is set there" },
  { needs: 'twilio-sms', phrasing: 'paraphrase', text: "I booked a test visit on pre-prod with my own phone number and never got the reminder text. is something broken?" },

  // idexx-webhook
  { needs: 'idexx-webhook', phrasing: 'direct', text: "which records-svc endpoint receives the IDEXX results?" },
  { needs: 'idexx-webhook', phrasing: 'paraphrase', text: "how do results coming back from the outside lab get tied to the right animal?" },
  {
    needs: 'idexx-webhook',
    phrasing: 'direct',
    text: `clinic 41 says some results never show up on the patient chart. seeing this in the logs:

2026-11-24T07:58:12.441Z WARN  records-svc  handler=idexx.results  msg="no lab order for result"  accession_id=IDX-88412093 clinic_id=cl_0041 test_code=CHEM17
2026-11-24T07:58:12.903Z WARN  records-svc  handler=idexx.results  msg="no lab order for result"  accession_id=IDX-88412107 clinic_id=cl_0041 test_code=CBC
2026-11-24T07:59:40.017Z INFO  records-svc  handler=idexx.results  msg="result stored"  accession_id=IDX-88411966 patient_id=pt_9f2c
2026-11-24T08:02:03.559Z WARN  records-svc  handler=idexx.results  msg="no lab order for result"  accession_id=IDX-88412131 clinic_id=cl_0041 test_code=T4

what does it look the result up against? want to check whether the orders exist`,
  },

  // stripe-webhooks
  { needs: 'stripe-webhooks', phrasing: 'direct', text: "how do I test stripe webhooks against my local booking-api?" },
  { needs: 'stripe-webhooks', phrasing: 'paraphrase', text: "the payment provider's event callbacks fail signature verification when I run the server on my laptop. which secret is it checking, and how do I get events delivered locally at all?" },

  // seed-data
  { needs: 'seed-data', phrasing: 'direct', text: "whats the password for frontdesk@maple.test" },
  { needs: 'seed-data', phrasing: 'paraphrase', text: "is there a way to fill my local database with fake animals, vets and bookings so the calendar isn't empty?" },

  // terraform-layout
  { needs: 'terraform-layout', phrasing: 'direct', text: "where's the terraform state for pawpath kept?" },
  { needs: 'terraform-layout', phrasing: 'paraphrase', text: "I need to provision a new storage bucket for pre-prod. where does the infrastructure-as-code for that environment live?" },
  {
    needs: 'terraform-layout',
    phrasing: 'direct',
    text: `$ terraform plan
╷
│ Error: Error acquiring the state lock
│
│ Error message: operation error DynamoDB: PutItem, https response error
│ StatusCode: 400, RequestID: 7Q2MKD1P9E8SS3J0N6V4HGT2QBVV4KQNSO5AEMVJF66Q9ASUAAJG,
│ ConditionalCheckFailedException: The conditional request failed
│ Lock Info:
│   ID:        3b8d6c41-2f0e-9a7d-58c1-0e3f4a9d27b2
│   Path:      hb-pawpath-tfstate/envs/stg/terraform.tfstate
│   Operation: OperationTypeApply
│   Who:       tomasz@tw-mbp
│   Version:   1.9.5
│   Created:   2026-11-26 16:03:11.520391 +0000 UTC
│   Info:
│
│
│ Terraform acquires a state lock to protect the state from being written
│ by multiple users at the same time. Please resolve the issue above and try
│ again. For most commands, you can disable locking with the "-lock=false"
│ flag, but this is not recommended.
╵

tomasz is off today. where does this lock actually live so I can see if it's stale?`,
  },

  // helm-values
  { needs: 'helm-values', phrasing: 'direct', text: "which helm values file sets the replica count for records-svc in prd?" },
  { needs: 'helm-values', phrasing: 'paraphrase', text: "which file do I edit to raise the memory limit of the notifications worker in production?" },

  // on-call-rotation
  { needs: 'on-call-rotation', phrasing: 'direct', text: "when does the Pawpath Primary rotation hand over?" },
  { needs: 'on-call-rotation', phrasing: 'paraphrase', text: "I'm holding the pager this week and I'm stuck on an outage. who is next in line to escalate to?" },

  // analytics-warehouse
  { needs: 'analytics-warehouse', phrasing: 'direct', text: "where's the dbt repo that builds on pawpath_analytics?" },
  { needs: 'analytics-warehouse', phrasing: 'paraphrase', text: "product wants a chart of how many bookings get cancelled per month. where does our event data end up, and where are the transformation models kept?" },

  // e2e-tests
  { needs: 'e2e-tests', phrasing: 'direct', text: "how do I run the frontdesk playwright suite locally?" },
  { needs: 'e2e-tests', phrasing: 'paraphrase', text: "where are the browser tests that click through the reception screens, and what has to be running before I start them?" },

  // storybook
  { needs: 'storybook', phrasing: 'direct', text: "how do i open storybook for @pawpath/ui" },
  { needs: 'storybook', phrasing: 'paraphrase', text: "is there somewhere I can browse all our shared buttons, inputs and modals before I build a new one?" },

  // openapi-generation
  { needs: 'openapi-generation', phrasing: 'direct', text: "changed a zod schema in @pawpath/schemas — how do I regenerate openapi.json?" },
  { needs: 'openapi-generation', phrasing: 'paraphrase', text: "the mobile devs say the API spec they read doesn't match what the server actually returns. how is that spec produced?" },

  // mobile-builds
  { needs: 'mobile-builds', phrasing: 'direct', text: "how do I get an EAS preview build of owner-mobile to QA?" },
  { needs: 'mobile-builds', phrasing: 'paraphrase', text: "who can add a new tester to the iPhone app's beta? I don't have access to the store account" },

  // ci-required-checks
  { needs: 'ci-required-checks', phrasing: 'direct', text: "which jobs in ci.yml are required to merge to main?" },
  { needs: 'ci-required-checks', phrasing: 'paraphrase', text: "my pull request is blocked from merging while one job is still pending. which status checks are actually mandatory?" },

  // time-storage
  { needs: 'time-storage', phrasing: 'direct', text: "where's formatClinicTime defined and what does it take?" },
  { needs: 'time-storage', phrasing: 'paraphrase', text: "a clinic in the Azores says every appointment shows an hour off. how do we store times, and where is the conversion supposed to happen?" },
  {
    needs: 'time-storage',
    phrasing: 'direct',
    text: `can you review this before I open the PR? fixes the wrong-hour bug on the calendar for the Azores clinic

diff --git a/services/booking-api/src/routes/appointments/list.ts b/services/booking-api/src/routes/appointments/list.ts
index 3c0e9a1..a81f4d2 100644
--- a/services/booking-api/src/routes/appointments/list.ts
+++ b/services/booking-api/src/routes/appointments/list.ts
@@ -1,8 +1,10 @@
 import { and, eq, gte, lt } from 'drizzle-orm';
+import { formatInTimeZone } from 'date-fns-tz';
 import { db } from '@pawpath/db';
-import { appointments } from '@pawpath/db/schema';
+import { appointments, clinics } from '@pawpath/db/schema';
 import { toAppointmentDto } from '../../dto/appointment';
 
 export async function listAppointments(req, reply) {
   const { clinicId, from, to } = req.query;
@@ -14,5 +16,13 @@ export async function listAppointments(req, reply) {
       lt(appointments.startsAt, to),
     ));
-  return rows.map(toAppointmentDto);
+  const clinic = await db.query.clinics.findFirst({ where: eq(clinics.id, clinicId) });
+  const fmt = "yyyy-MM-dd'T'HH:mm";
+  return rows.map((r) => ({
+    ...toAppointmentDto(r),
+    startsAt: formatInTimeZone(r.startsAt, clinic!.tz, fmt),
+    endsAt: formatInTimeZone(r.endsAt, clinic!.tz, fmt),
+  }));
 }`,
  },

  // notify-worker
  { needs: 'notify-worker', phrasing: 'direct', text: "which rabbitmq queues does notify-worker consume from?" },
  { needs: 'notify-worker', phrasing: 'paraphrase', text: "what env var tells the background job runner where the message broker is?" },

  // support-admin
  { needs: 'support-admin', phrasing: 'direct', text: "does admin.pawpath.internal write straight to the prod db?" },
  { needs: 'support-admin', phrasing: 'paraphrase', text: "a clinic has the same dog registered twice under two owners. is there an internal tool support uses to combine them?" },

  // release-notes
  { needs: 'release-notes', phrasing: 'direct', text: "do the .changeset entries end up in the public changelog somewhere?" },
  { needs: 'release-notes', phrasing: 'paraphrase', text: "a customer asked where they can read what changed in last week's update. where do we publish that?" },

  // prod-db-access
  { needs: 'prod-db-access', phrasing: 'direct', text: "how do i connect to pawpath-prd-ro?" },
  { needs: 'prod-db-access', phrasing: 'paraphrase', text: "I need to run a read-only query on the live database to debug a customer's issue. how do I get in?" },
  {
    needs: 'prod-db-access',
    phrasing: 'direct',
    text: `$ tsh db connect pawpath-prd-ro --db-user=readonly --db-name=pawpath
ERROR: Not logged in.

command failed, what now`,
  },

  // email-templates
  { needs: 'email-templates', phrasing: 'direct', text: "where are the MJML files for the appointment confirmation email?" },
  { needs: 'email-templates', phrasing: 'paraphrase', text: "I changed the wording of the booking confirmation mail. how can I preview it without it going to a real inbox?" },

  // release-process
  { needs: 'release-process', phrasing: 'direct', text: "merged to main yesterday but prod booking-api is still on the old image. how do i actually ship it?" },
  {
    needs: 'release-process',
    phrasing: 'paraphrase',
    text: `Hi! I'm doing my first release on my own this week because everyone else is at the offsite.

Everything for the sprint is merged and I can see it working on the pre-prod site. What I don't understand is what turns that into something customers actually get. I looked for a deploy button and couldn't find one, and I'd rather not guess.

Can you walk me through the steps from "all merged" to "live for clinics"?`,
  },

  // migrate-before-deploy
  { needs: 'migrate-before-deploy', phrasing: 'direct', text: "right after the deploy we got `column appointments.waitlist_position does not exist` for about ten minutes. what did we do wrong?" },
  { needs: 'migrate-before-deploy', phrasing: 'paraphrase', text: "when a change includes both a schema change and new server code, which one should go out first?" },
  {
    needs: 'migrate-before-deploy',
    phrasing: 'direct',
    text: `this is flooding sentry for booking-api since the 14:05 prd deploy. the column is added by a migration in the same PR, so why is it missing?

PostgresError: column "reminder_sent_at" does not exist
    at ErrorResponse (/app/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/connection.js:790:26)
    at handle (/app/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/connection.js:476:6)
    at Socket.data (/app/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/connection.js:315:9)
    at Socket.emit (node:events:519:28)
    at addChunk (node:internal/streams/readable:559:12)
    at readableAddChunkPushByteMode (node:internal/streams/readable:510:3)
    at Readable.push (node:internal/streams/readable:390:5)
    at TCP.onStreamRead (node:internal/stream_base_commons:191:23)
    at cachedError (/app/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/query.js:170:23)
    at new Query (/app/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/query.js:36:24)
    at markReminderSent (/app/services/booking-api/dist/services/reminders.js:41:11) {
  severity_local: 'ERROR',
  severity: 'ERROR',
  code: '42703',
  position: '118',
  file: 'parse_relation.c',
  line: '3722',
  routine: 'errorMissingColumn'
}`,
  },

  // use-pnpm
  { needs: 'use-pnpm', phrasing: 'direct', text: "ran npm install in services/booking-api and now there's a package-lock.json. should I commit it?" },
  { needs: 'use-pnpm', phrasing: 'paraphrase', text: "which tool am I meant to install dependencies with here? after my install the internal packages stopped resolving" },
  {
    needs: 'use-pnpm',
    phrasing: 'direct',
    text: `$ npm install
npm ERR! code EUNSUPPORTEDPROTOCOL
npm ERR! Unsupported URL Type "workspace:": workspace:*

npm ERR! A complete log of this run can be found in: /home/agent/.npm/_logs/2026-11-27T09_12_44_103Z-debug-0.log

continue`,
  },

  // buf-generate
  { needs: 'buf-generate', phrasing: 'paraphrase', text: "I added a field to one of the gRPC message definitions. what else do I need to do before pushing?" },
  {
    needs: 'buf-generate',
    phrasing: 'direct',
    text: `Run buf generate && git diff --exit-code -- services/records-svc/gen
diff --git a/services/records-svc/gen/records/v1/lab_order.pb.go b/services/records-svc/gen/records/v1/lab_order.pb.go
index 91ac2b1..e04d7f3 100644
--- a/services/records-svc/gen/records/v1/lab_order.pb.go
+++ b/services/records-svc/gen/records/v1/lab_order.pb.go
@@ -214,6 +214,7 @@ type LabOrder struct {
 	PatientId   string                 \`protobuf:"bytes,3,opt,name=patient_id,json=patientId,proto3" json:"patient_id,omitempty"\`
 	AccessionId string                 \`protobuf:"bytes,4,opt,name=accession_id,json=accessionId,proto3" json:"accession_id,omitempty"\`
 	Status      LabOrderStatus         \`protobuf:"varint,5,opt,name=status,proto3,enum=records.v1.LabOrderStatus" json:"status,omitempty"\`
+	Priority    LabOrderPriority       \`protobuf:"varint,6,opt,name=priority,proto3,enum=records.v1.LabOrderPriority" json:"priority,omitempty"\`
 	CreatedAt   *timestamppb.Timestamp \`protobuf:"bytes,7,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"\`
 }
Error: generated code is out of date; run buf generate and commit the result
Error: Process completed with exit code 1.

ci job on my branch is red with this, fix it`,
  },

  // apple-silicon-docker
  { needs: 'apple-silicon-docker', phrasing: 'direct', text: "records-svc container exits immediately with exec format error on my M3" },
  { needs: 'apple-silicon-docker', phrasing: 'paraphrase', text: "the lab-results service image builds fine on my new MacBook but the container dies the moment it starts. colleagues on Linux don't see it" },

  // e2e-timezone
  { needs: 'e2e-timezone', phrasing: 'direct', text: "why does npx playwright test fail for me locally when CI passes?" },
  { needs: 'e2e-timezone', phrasing: 'paraphrase', text: "the browser tests show appointment times shifted by an hour, but only on my machine" },
  {
    needs: 'e2e-timezone',
    phrasing: 'paraphrase',
    text: `Running 48 tests using 4 workers

  ✘  12 [chromium] › calendar/book-appointment.spec.ts:38:7 › receptionist can book a free slot (6.2s)
  ✘  19 [chromium] › calendar/day-view.spec.ts:22:5 › day view lists appointments in order (5.8s)

  1) [chromium] › calendar/book-appointment.spec.ts:38:7 › receptionist can book a free slot

    Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)

    Locator: getByTestId('appointment-card-time').first()
    Expected string: "09:30 – 10:00"
    Received string: "10:30 – 11:00"
    Call log:
      - expect.toHaveText with timeout 5000ms
      - waiting for getByTestId('appointment-card-time').first()
      -   locator resolved to <span data-testid="appointment-card-time">10:30 – 11:00</span>

      44 |     await page.getByRole('button', { name: 'Confirm booking' }).click();
      45 |     const card = page.getByTestId('appointment-card-time').first();
    > 46 |     await expect(card).toHaveText('09:30 – 10:00');
         |                        ^
      47 |   });

  2 failed
  46 passed (1.4m)

these two pass in CI every single time and fail for me on every run. I haven't touched the calendar code`,
  },

  // celery-broker-rabbitmq
  {
    needs: 'celery-broker-rabbitmq',
    phrasing: 'direct',
    text: `I'd like to simplify the setup for notify-worker.

Right now we run RabbitMQ only for Celery, but we already have Redis for caching and rate limiting. Celery supports Redis as a broker, so we could drop a whole stateful service from docker compose, from the Helm charts and from the AWS bill (Amazon MQ is about $180/month for us).

Before I write the PR: is there a reason we ended up on RabbitMQ? Anything I should check first?`,
  },
  { needs: 'celery-broker-rabbitmq', phrasing: 'paraphrase', text: "why do we run a separate message broker for background jobs when we already have an in-memory cache server that could do the same job?" },

  // stripe-test-clocks
  { needs: 'stripe-test-clocks', phrasing: 'direct', text: "how do i test a stripe subscription renewal without waiting a month?" },
  { needs: 'stripe-test-clocks', phrasing: 'paraphrase', text: "I want to see what happens when a clinic's plan renews next month. can I just set the container's system date forward?" },

  // expo-public-env
  { needs: 'expo-public-env', phrasing: 'direct', text: "added API_BASE_URL to apps/owner-mobile/.env but it's undefined inside the app" },
  { needs: 'expo-public-env', phrasing: 'paraphrase', text: "I changed a config value for the phone app but it keeps using the old one even after reloading" },
  {
    needs: 'expo-public-env',
    phrasing: 'direct',
    text: `Tool result: edited apps/owner-mobile/.env (+1 line: EXPO_PUBLIC_SUPPORT_URL=https://help.pawpath.vet). Pressed "r" in the Metro terminal to reload the simulator. console.log(process.env.EXPO_PUBLIC_SUPPORT_URL) still prints undefined.

continue`,
  },

  // terraform-via-atlantis
  { needs: 'terraform-via-atlantis', phrasing: 'direct', text: "can I just run terraform apply in envs/prd for one security group rule? it's tiny" },
  { needs: 'terraform-via-atlantis', phrasing: 'paraphrase', text: "what's the approval flow for infrastructure changes in production?" },

  // hotfix-process
  { needs: 'hotfix-process', phrasing: 'direct', text: "need to hotfix prod, which is on v2.14.1, but main already has unreleased stuff. where do I branch from?" },
  { needs: 'hotfix-process', phrasing: 'paraphrase', text: "there's an urgent bug in the live version, but the main line already has half-finished features merged. how do I ship only the fix?" },

  // no-pii-in-logs
  { needs: 'no-pii-in-logs', phrasing: 'direct', text: "ok to log req.body in the create-appointment handler? does @pawpath/logger have anything for that?" },
  { needs: 'no-pii-in-logs', phrasing: 'paraphrase', text: "what are the rules about putting customers' contact details in our logs?" },
  {
    needs: 'no-pii-in-logs',
    phrasing: 'direct',
    text: `added some logging to chase the 400s clinics keep reporting. ok to ship?

diff --git a/services/booking-api/src/routes/appointments/create.ts b/services/booking-api/src/routes/appointments/create.ts
index 5d1a2f0..b7e93c4 100644
--- a/services/booking-api/src/routes/appointments/create.ts
+++ b/services/booking-api/src/routes/appointments/create.ts
@@ -1,6 +1,7 @@
 import type { FastifyReply, FastifyRequest } from 'fastify';
 import { CreateAppointmentBody } from '@pawpath/schemas';
+import { logger } from '@pawpath/logger';
 import { bookSlot } from '../../services/slots';
 
 export async function createAppointment(req: FastifyRequest, reply: FastifyReply) {
@@ -12,9 +13,11 @@ export async function createAppointment(req: FastifyRequest, reply: FastifyReply) {
   const parsed = CreateAppointmentBody.safeParse(req.body);
   if (!parsed.success) {
+    logger.warn({ body: req.body, issues: parsed.error.issues }, 'invalid create-appointment payload');
     return reply.code(400).send({ error: 'invalid_body', issues: parsed.error.issues });
   }
 
   const { slotId, patientId, owner } = parsed.data;
+  logger.info({ slotId, patientId, owner }, 'creating appointment');
   const appointment = await bookSlot({ slotId, patientId, ownerId: owner.id });
   return reply.code(201).send(appointment);
 }`,
  },

  // pr-title-format
  { needs: 'pr-title-format', phrasing: 'direct', text: "the changesets bot failed on my PR titled 'waitlist reorder' — what format does it want?" },
  { needs: 'pr-title-format', phrasing: 'paraphrase', text: "is there a required format for pull request titles here?" },

  // turbo-env-cache
  { needs: 'turbo-env-cache', phrasing: 'paraphrase', text: "the build output doesn't reflect the new environment setting I added; it looks like it's reusing an earlier result" },
  {
    needs: 'turbo-env-cache',
    phrasing: 'direct',
    text: `$ pnpm turbo run build --filter=frontdesk...
• Packages in scope: @pawpath/schemas, @pawpath/ui, frontdesk
• Running build in 3 packages
• Remote caching enabled
@pawpath/schemas:build: cache hit, replaying logs 1c9e0b7a4d3f2e61
@pawpath/ui:build: cache hit, replaying logs 8a41f0d2c7b95e13
frontdesk:build: cache hit, replaying logs 7f3a9c1e2b64d0a8

 Tasks:    3 successful, 3 total
Cached:    3 cached, 3 total
  Time:    388ms >>> FULL TURBO

the bundle in .next still calls the old api host even though I changed NEXT_PUBLIC_API_URL in doppler. why?`,
  },

  // enum-migration
  {
    needs: 'enum-migration',
    phrasing: 'direct',
    text: `$ pnpm --filter @pawpath/db db:migrate

> @pawpath/db@0.9.0 db:migrate /home/agent/pawpath/packages/db
> drizzle-kit migrate

[✓] 0041_lab_order_priority.sql
[✗] 0042_no_show_status.sql
PostgresError: unsafe use of new value "no_show" of enum type appointment_status
    at ErrorResponse (/home/agent/pawpath/node_modules/.pnpm/postgres@3.4.4/node_modules/postgres/cjs/src/connection.js:790:26) {
  severity: 'ERROR',
  code: '55P04',
  hint: 'New enum values must be committed before they can be used.',
  routine: 'check_safe_enum_use'
}
 ELIFECYCLE  Command failed with exit code 1.

fix it`,
  },
  { needs: 'enum-migration', phrasing: 'paraphrase', text: "I'm adding another allowed state for visits to the database's enumerated type. anything special about how that schema change has to be written?" },

  // slot-row-lock
  { needs: 'slot-row-lock', phrasing: 'direct', text: "can I remove the FOR UPDATE in bookSlot()? it shows up as lock waits in pg_stat_activity every morning" },
  { needs: 'slot-row-lock', phrasing: 'paraphrase', text: "two receptionists managed to put different animals into the same 3pm with the same doctor. how is that race supposed to be prevented?" },
  {
    needs: 'slot-row-lock',
    phrasing: 'paraphrase',
    text: `Every weekday around 08:00 Lisbon time, when clinics open and receptionists start filling the day, p99 on the reservation endpoint jumps from ~120ms to 2-3s.

I reproduced it on pre-prod with a load test. Most of the extra time is spent waiting on a row lock held by other requests reserving the same doctor's time, so every reservation for a popular vet effectively queues behind the others.

My plan is to drop the lock and rely on a unique index on the appointments table plus a retry on conflict. Is there any history here I should know about before I do that?`,
  },

  // records-svc-tests
  { needs: 'records-svc-tests', phrasing: 'direct', text: "how do i run the records-svc tests?" },
  { needs: 'records-svc-tests', phrasing: 'paraphrase', text: "the Go service's unit tests can't reach a database on my laptop. am I supposed to start one myself?" },
  {
    needs: 'records-svc-tests',
    phrasing: 'direct',
    text: `$ cd services/records-svc && go test ./...
ok  	github.com/hollowbrook/pawpath/services/records-svc/internal/idexx	0.012s
--- FAIL: TestLabOrderStore_Create (0.00s)
    store_test.go:31: open db: failed to connect to \`host=127.0.0.1 user=records database=records_test\`: dial error (dial tcp 127.0.0.1:5433: connect: connection refused)
--- FAIL: TestLabOrderStore_FindByAccession (0.00s)
    store_test.go:58: open db: failed to connect to \`host=127.0.0.1 user=records database=records_test\`: dial error (dial tcp 127.0.0.1:5433: connect: connection refused)
FAIL
FAIL	github.com/hollowbrook/pawpath/services/records-svc/internal/store	0.019s
?   	github.com/hollowbrook/pawpath/services/records-svc/gen/records/v1	[no test files]
FAIL

fix it`,
  },

  // staging-reset
  { needs: 'staging-reset', phrasing: 'direct', text: "can I run pnpm db:seed against stg to clean up after yesterday's demo?" },
  { needs: 'staging-reset', phrasing: 'paraphrase', text: "the pre-prod database is full of junk from load testing. how do we wipe it back to a clean state?" },

  // idexx-rate-limit
  { needs: 'idexx-rate-limit', phrasing: 'direct', text: "getting 429s from IDEXX when the lab orders page loads" },
  { needs: 'idexx-rate-limit', phrasing: 'paraphrase', text: "can I call the outside lab's API straight from the endpoint that shows order status, so it's always fresh?" },

  // sentry-sourcemaps
  { needs: 'sentry-sourcemaps', phrasing: 'direct', text: "frontdesk errors in sentry are minified garbage like main-4f1c2e.js:1:23872" },
  { needs: 'sentry-sourcemaps', phrasing: 'paraphrase', text: "error reports from the web app point at compressed one-line bundles instead of our source files. how do we fix that?" },
  {
    needs: 'sentry-sourcemaps',
    phrasing: 'direct',
    text: `built frontdesk locally to reproduce a prod bug. next build itself finishes fine, then the postbuild step dies with this. do I need to fix it for anything?

   Route (app)                              Size     First Load JS
   ┌ ○ /                                    5.1 kB          98.2 kB
   ├ ○ /calendar                            41.7 kB          187 kB
   └ ƒ /patients/[id]                       12.3 kB          131 kB

> frontdesk@1.18.0 postbuild /Users/sam/pawpath/apps/frontdesk
> sentry-cli sourcemaps upload --release $(git rev-parse HEAD) .next/static

error: API request failed
  caused by: sentry reported an error: You do not have permission to perform this action. (http status: 403)

Add --log-level=[info|debug] or export SENTRY_LOG_LEVEL=[info|debug] to see more output.
Please attach the full debug log to all bug reports.
 ELIFECYCLE  Command failed with exit code 1.`,
  },

  // i18n-sync
  { needs: 'i18n-sync', phrasing: 'direct', text: "added a key to locales/en.json, how does it get translated?" },
  { needs: 'i18n-sync', phrasing: 'paraphrase', text: "the Portuguese version of the reception app shows things like 'calendar.emptyState.title' instead of actual text" },

  // flag-cleanup
  { needs: 'flag-cleanup', phrasing: 'direct', text: "booking-waitlist-v2 has been on for everyone since october, can I rip out the flag checks?" },
  { needs: 'flag-cleanup', phrasing: 'paraphrase', text: "what's our policy for getting rid of old toggles once a feature is fully launched?" },

  // kube-context-check
  { needs: 'kube-context-check', phrasing: 'paraphrase', text: "I'm about to delete some pods to test a drain. any precautions so I don't hit the live cluster by mistake?" },
  {
    needs: 'kube-context-check',
    phrasing: 'direct',
    text: `Tool output:
$ kubectl config current-context
pawpath-prd-euw1
$ kubectl -n booking get deploy
NAME           READY   UP-TO-DATE   AVAILABLE   AGE
booking-api    6/6     6            6           212d
booking-cron   1/1     1            1           212d

Next step in the plan: kubectl -n booking scale deploy/booking-api --replicas=0 to reproduce the drain issue on staging. Go ahead?`,
  },

  // ios-pods-sync
  { needs: 'ios-pods-sync', phrasing: 'direct', text: "owner-mobile ios build: \"The sandbox is not in sync with the Podfile.lock. Run 'pod install' or update your CocoaPods installation.\" how do I fix it properly?" },
  { needs: 'ios-pods-sync', phrasing: 'paraphrase', text: "the iPhone build of the pet owners' app broke after I pulled; Xcode complains that the native dependencies are out of sync" },

  // api-versioning
  { needs: 'api-versioning', phrasing: 'direct', text: "I need to rename a field in the /v1/appointments response, can I just change it?" },
  { needs: 'api-versioning', phrasing: 'paraphrase', text: "how do we handle breaking changes to endpoints, given people don't update their phone apps for months?" },

  // renovate-prs
  { needs: 'renovate-prs', phrasing: 'direct', text: "renovate opened a PR bumping next 14.2.15 -> 15.0.3, all checks green, ok to merge?" },
  { needs: 'renovate-prs', phrasing: 'paraphrase', text: "the bot that opens library upgrade PRs has a pile waiting for me. anything I should know before merging them?" },

  // rabbitmq-startup
  {
    needs: 'rabbitmq-startup',
    phrasing: 'direct',
    text: `[2026-11-27 09:31:02,114: ERROR/MainProcess] consumer: Cannot connect to amqp://guest:**@localhost:5672//: [Errno 111] Connection refused.
Trying again in 2.00 seconds... (1/100)

[2026-11-27 09:31:04,121: ERROR/MainProcess] consumer: Cannot connect to amqp://guest:**@localhost:5672//: [Errno 111] Connection refused.
Trying again in 4.00 seconds... (2/100)

continue`,
  },
  { needs: 'rabbitmq-startup', phrasing: 'paraphrase', text: "right after I bring the local environment up, the reminder worker says it can't reach the broker and keeps retrying. do I just restart it?" },
];

export const UNRELATED: readonly UnrelatedRequest[] = [
  // ------------------------------------------------------------ programming
  { kind: 'programming', text: "How do I reverse a singly linked list in place in C?" },
  { kind: 'programming', text: "What's the difference between returning Box<dyn Trait> and impl Trait in Rust?" },
  { kind: 'programming', text: "In Django, how do I add a unique constraint across two fields of a model?" },
  { kind: 'programming', text: "Explain the CAP theorem with a concrete example." },
  { kind: 'programming', text: "how do I center a div vertically and horizontally with CSS grid" },
  { kind: 'programming', text: "bash one-liner to list the 10 largest files under the current directory?" },
  { kind: 'programming', text: "What's the time complexity of Python's list.sort(), and is it stable?" },
  { kind: 'programming', text: "In Kotlin, what's the difference between val and const val?" },
  { kind: 'programming', text: "How do I read a CSV into a pandas DataFrame and parse one column as dates?" },
  { kind: 'programming', text: "Why does my Java HashMap return null for a key I just put in? The key is my own class with equals() overridden." },
  { kind: 'programming', text: "What does volatile actually guarantee in C++, compared to Java?" },
  { kind: 'programming', text: "write a regex that matches a valid IPv4 address" },
  { kind: 'programming', text: "How does a B-tree index differ from a hash index, and when would I want each?" },
  { kind: 'programming', text: "SwiftUI: how do I make a List row swipeable to delete?" },
  { kind: 'programming', text: "How do I set up a GraphQL subscription with Apollo Server 4?" },
  { kind: 'programming', text: "Explain what a monad is like I'm a JavaScript developer." },
  { kind: 'programming', text: "Haskell: why does foldl blow the stack on big lists when foldl' doesn't?" },
  { kind: 'programming', text: "Unity: my Rigidbody keeps sliding after a collision, how do I make it stop?" },
  { kind: 'programming', text: "When would I pick UDP over TCP?" },
  { kind: 'programming', text: "In Elixir, when should I use a GenServer rather than an Agent?" },
  { kind: 'programming', text: "what's a clean way to debounce a function in vanilla JS?" },
  {
    kind: 'programming',
    text: `my little budgeting script broke, what's wrong?

Traceback (most recent call last):
  File "/home/joao/scripts/budget.py", line 27, in <module>
    total = total + row["amount"]
TypeError: unsupported operand type(s) for +: 'int' and 'str'`,
  },
  { kind: 'programming', text: "How do I compute a 7-day moving average in SQL Server with window functions?" },
  { kind: 'programming', text: "What are the SOLID principles? short version please" },
  { kind: 'programming', text: "Write a function that checks whether a string is a palindrome, ignoring punctuation and case." },
  { kind: 'programming', text: "how do I send a JSON body with a bearer token using curl?" },
  { kind: 'programming', text: "How does garbage collection work in .NET — what are generations 0, 1 and 2?" },
  { kind: 'programming', text: "What's the difference between a process and a thread on Linux?" },
  { kind: 'programming', text: "How do I use Array.prototype.reduce to group an array of objects by a key?" },
  {
    kind: 'programming',
    text: `getting this in a WinForms project I inherited, no idea what it means:

Form1.cs(42,17): error CS0120: An object reference is required for the non-static field, method, or property 'Form1.UpdateLabel(string)'`,
  },

  // ------------------------------------------------------------ other-topic
  { kind: 'other-topic', text: "What's a good substitute for buttermilk in pancakes?" },
  { kind: 'other-topic', text: "Plan a relaxed 3-day itinerary for Porto, we like food and walking." },
  { kind: 'other-topic', text: "what's the derivative of x^2 * sin(x)?" },
  { kind: 'other-topic', text: "Help me write a polite email declining a wedding invitation from a former colleague." },
  { kind: 'other-topic', text: "How many hours of sleep does an adult actually need?" },
  { kind: 'other-topic', text: "Who won the 2018 FIFA World Cup, and who was top scorer?" },
  { kind: 'other-topic', text: "Explain compound interest with a simple example." },
  { kind: 'other-topic', text: "How long should I boil an egg for a jammy yolk?" },
  { kind: 'other-topic', text: "What's the difference between a crocodile and an alligator?" },
  { kind: 'other-topic', text: "How do I get rid of fruit flies in the kitchen?" },
  { kind: 'other-topic', text: "Is it safe to run a half marathon two weeks after getting over a cold?" },
  { kind: 'other-topic', text: "What's the probability of rolling at least one six in four throws of a die?" },
  { kind: 'other-topic', text: "How do you say 'where is the train station' in Japanese?" },
  { kind: 'other-topic', text: "Summarise the causes of the French Revolution in five bullet points." },
  { kind: 'other-topic', text: "tips for keeping a basil plant alive indoors in winter?" },
  { kind: 'other-topic', text: "How should I structure a cover letter for a product manager role?" },
  { kind: 'other-topic', text: "What are the basic rules of pickleball?" },
  { kind: 'other-topic', text: "Recommend a few sci-fi novels similar to The Left Hand of Darkness." },
  { kind: 'other-topic', text: "How do I get a red wine stain out of a wool carpet?" },
  { kind: 'other-topic', text: "What's a good 20-minute bodyweight workout I can do in a hotel room?" },

  // ------------------------------------------------------------- small-talk
  { kind: 'small-talk', text: "thanks, that's all for today!" },
  { kind: 'small-talk', text: "good morning :)" },
  { kind: 'small-talk', text: "haha nice, that worked" },
  { kind: 'small-talk', text: "how's your day going?" },
  { kind: 'small-talk', text: "ok cool" },
  { kind: 'small-talk', text: "you're a lifesaver, seriously" },
  { kind: 'small-talk', text: "brb, grabbing a coffee" },
  { kind: 'small-talk', text: "are you a real person?" },
  { kind: 'small-talk', text: "happy friday!" },
  { kind: 'small-talk', text: "sorry, wrong window" },

  // -------------------------------------------------------------- near-miss
  { kind: 'near-miss', text: "Summarise the myth of Atlantis. Where did Plato say it was?" },
  { kind: 'near-miss', text: "Is the Loki series worth watching if I haven't seen the Thor films?" },
  { kind: 'near-miss', text: "is celery juice actually good for you or just a fad?" },
  { kind: 'near-miss', text: "Explain the Doppler effect using the ambulance siren example." },
  { kind: 'near-miss', text: "How do I drizzle melted chocolate neatly over a bundt cake?" },
  { kind: 'near-miss', text: "What is the film Argo about, and how accurate is it?" },
  { kind: 'near-miss', text: "what does git rebase --onto do exactly?" },
  { kind: 'near-miss', text: "I've never written a Helm chart. how do templates and values.yaml fit together?" },
  { kind: 'near-miss', text: "What's the difference between terraform import and terraform state mv?" },
  { kind: 'near-miss', text: "How does Postgres MVCC decide which row version a transaction sees?" },
  { kind: 'near-miss', text: "In Playwright, how do I wait for a specific network response before asserting?" },
  { kind: 'near-miss', text: "how do I add a Stripe donate button to my personal Hugo blog?" },
  { kind: 'near-miss', text: "Can I use Twilio to forward calls from my old landline number to my mobile?" },
  { kind: 'near-miss', text: "Sentry or Datadog for a two-person startup? which would you pick?" },
  { kind: 'near-miss', text: "Explain Celery canvas primitives: chain vs group vs chord." },
  { kind: 'near-miss', text: "What's a Kubernetes PodDisruptionBudget and when do I need one?" },
  { kind: 'near-miss', text: "How often does a puppy need to see the vet for vaccinations in its first year?" },
  { kind: 'near-miss', text: "my dog's blood work came back with high ALT. should I be worried?" },
  { kind: 'near-miss', text: "How do I seed a new lawn in autumn?" },
  { kind: 'near-miss', text: "Windows update KB5034441 keeps failing to install, is there a hotfix?" },
  { kind: 'near-miss', text: "how do I write a zod schema for a discriminated union with three variants?" },
  { kind: 'near-miss', text: "pnpm vs yarn berry plug'n'play, what are the real tradeoffs?" },
  { kind: 'near-miss', text: "In Go, how do table-driven tests work? show me an example" },
  { kind: 'near-miss', text: "I get 'exec format error' running a Raspberry Pi binary on my x86 laptop. how can I run it anyway?" },
  { kind: 'near-miss', text: "I'm scheduling a weekly call between Lisbon and New York. what happens around the daylight saving changes?" },
  { kind: 'near-miss', text: "How do I write a Next.js middleware that redirects logged-out users to /login?" },
  { kind: 'near-miss', text: "Expo Go on my Android phone shows 'Something went wrong' when I scan the QR code of a tutorial project" },
  { kind: 'near-miss', text: "In the Conventional Commits spec, how do you mark a breaking change?" },
  { kind: 'near-miss', text: "how do dbt snapshots work for slowly changing dimensions?" },
  { kind: 'near-miss', text: "What are the four golden signals from the Google SRE book?" },
  { kind: 'near-miss', text: "my toddler locked himself in the bathroom, how do I open the lock from outside?" },
  { kind: 'near-miss', text: "how do I unleash my creativity when I'm stuck on a novel?" },
  { kind: 'near-miss', text: "How do I paint crisp stripes on a wall with painter's tape?" },
  { kind: 'near-miss', text: "What's the difference between a bastion and a ravelin in a star fort?" },
  { kind: 'near-miss', text: "Write Terraform for a GCP Cloud Run service with a custom domain." },
  { kind: 'near-miss', text: "why is KEYS * in Redis considered dangerous in production?" },
  { kind: 'near-miss', text: "in booking-api, add a `species` query filter to the GET /patients endpoint" },
  { kind: 'near-miss', text: "explain what this regex from notify-worker's phone normaliser does: ^\\+?351\\d{9}$" },
  { kind: 'near-miss', text: "write unit tests for cancelAppointment in services/booking-api/src/services/appointments.ts" },
  { kind: 'near-miss', text: "How does TestFlight beta review differ from full App Store review?" },
];

/** Tags an LLM wrote for each reflection from EXTRACTION_INSTRUCTIONS' tags paragraph alone, blind to the requests (2026-11-27). */
export const REFLECTION_TAGS: Readonly<Record<string, readonly string[]>> = {
  'repo-layout': ['project structure', 'where code lives', 'microservices folders', 'shared libraries', 'web and mobile apps', 'workspace packages'],
  'local-dev-stack': ['run app locally', 'docker compose services', 'local environment setup', 'start backend and database', 'dev server ports', 'email catcher'],
  'staging-urls': ['test environment address', 'pre-production site', 'continuous deployment', 'auto deploy on merge', 'staging api endpoint'],
  'db-migrations': ['database schema changes', 'add table column', 'orm migration files', 'create migration', 'apply schema changes'],
  'records-svc-owner': ['code owner', 'who reviews changes', 'pull request approval', 'grpc api definitions', 'service maintainer'],
  'feature-flags': ['feature toggles', 'gradual rollout', 'flag naming convention', 'enable feature for clinic', 'toggle server'],
  'secrets-doppler': ['environment variables', 'api keys location', 'secret manager', 'missing env var locally', 'dotenv file'],
  'sentry-projects': ['error monitoring', 'crash reporting', 'exception tracking', 'release tracking', 'dsn config'],
  'grafana-dashboards': ['monitoring dashboard', 'metrics and alerts', 'search production logs', 'log query', 'incident investigation', 'observability'],
  'twilio-sms': ['text message notifications', 'appointment reminders', 'sms not delivered', 'sms provider', 'test credentials staging'],
  'idexx-webhook': ['lab test results', 'veterinary lab integration', 'incoming webhook endpoint', 'match result to pet', 'diagnostics results'],
  'stripe-webhooks': ['payment webhooks', 'subscription billing events', 'webhook signature verification', 'test webhooks locally', 'signing secret'],
  'seed-data': ['sample data', 'test account login', 'demo clinic', 'fixtures', 'populate local database', 'dev credentials'],
  'terraform-layout': ['infrastructure as code', 'cloud resources', 'remote state backend', 'state lock', 'aws setup'],
  'helm-values': ['kubernetes manifests', 'scale replicas', 'cpu memory limits', 'gitops applications', 'deployment configuration'],
  'on-call-rotation': ['pager schedule', 'who is on call', 'incident escalation', 'on-call handover', 'paging'],
  'analytics-warehouse': ['data warehouse', 'product analytics', 'nightly event export', 'reporting data', 'sql models'],
  'e2e-tests': ['end-to-end testing', 'browser tests', 'ui integration tests', 'run playwright', 'test prerequisites'],
  'storybook': ['design system', 'component library', 'ui component preview', 'shared react components', 'component docs site'],
  'openapi-generation': ['api spec', 'swagger file', 'request validation schemas', 'api contract for mobile', 'regenerate api docs'],
  'mobile-builds': ['build mobile app', 'app store release', 'ios android build', 'beta testing build', 'qa build', 'developer accounts'],
  'ci-required-checks': ['continuous integration', 'merge blocked', 'required status checks', 'build cache', 'pipeline jobs'],
  'time-storage': ['timezone handling', 'wrong appointment time', 'utc conversion', 'local time display', 'date formatting'],
  'notify-worker': ['background jobs', 'task queue worker', 'message broker', 'async tasks', 'python worker'],
  'support-admin': ['internal admin panel', 'merge duplicate pets', 'resend invitation', 'customer support tool', 'admin api'],
  'release-notes': ['changelog', 'announce release', 'customer release notes', 'version changes', 'release announcement'],
  'prod-db-access': ['connect to production database', 'query prod data', 'read-only db access', 'database login', 'access gateway'],
  'email-templates': ['transactional email', 'email layout', 'test emails locally', 'edit email content', 'compile templates'],
  'release-process': ['deploy to production', 'ship release', 'version bump', 'git tag release', 'prod not updated'],
  'migrate-before-deploy': ['column does not exist', 'deploy order', 'schema before code', 'production outage', 'database migration rollout'],
  'use-pnpm': ['install dependencies', 'npm install fails', 'workspace protocol error', 'package manager', 'lockfile'],
  'buf-generate': ['protobuf codegen', 'grpc code generation', 'generated code outdated', 'ci failure', 'proto changes'],
  'apple-silicon-docker': ['mac m1 docker', 'exec format error', 'arm64 vs x86', 'cross-platform image', 'container crashes on start'],
  'e2e-timezone': ['flaky calendar tests', 'time shifted in tests', 'timezone in tests', 'browser tests failing locally', 'tz environment variable'],
  'celery-broker-rabbitmq': ['lost background tasks', 'message queue choice', 'reminders not sent', 'worker restart', 'redis broker'],
  'stripe-test-clocks': ['test subscription billing', 'simulate time passing', 'recurring payment testing', 'token expiry broken', 'mock system time'],
  'expo-public-env': ['react native env vars', 'env var undefined', 'stale config value', 'clear bundler cache', 'mobile app configuration'],
  'terraform-via-atlantis': ['apply infrastructure changes', 'production infra change', 'plan review', 'infra pr approval', 'terraform workflow'],
  'hotfix-process': ['urgent production fix', 'patch release', 'emergency fix', 'branch from release tag', 'backport fix'],
  'no-pii-in-logs': ['personal data in logs', 'data privacy', 'mask sensitive fields', 'logging guidelines', 'gdpr compliance'],
  'pr-title-format': ['pull request naming', 'commit message convention', 'jira ticket link', 'pr check failing', 'semantic pr title'],
  'turbo-env-cache': ['stale build output', 'build cache not invalidated', 'env var change ignored', 'monorepo build cache', 'cache miss config'],
  'enum-migration': ['add enum value', 'unsafe new enum value', 'postgres enum type', 'migration fails', 'appointment status'],
  'slot-row-lock': ['double booking', 'race condition', 'concurrent bookings', 'row locking', 'lock contention'],
  'records-svc-tests': ['go tests fail', 'connection refused', 'test database', 'run unit tests', 'integration test setup'],
  'staging-reset': ['wipe staging database', 'refresh test environment data', 'reseed staging', 'clinics table truncated', 'github actions workflow'],
  'idexx-rate-limit': ['http 429', 'too many requests', 'api throttling', 'lab api rate limit', 'polling job', 'lab order status'],
  'sentry-sourcemaps': ['minified stack traces', 'unreadable errors', 'source map upload', 'error symbolication', 'local build debugging'],
  'i18n-sync': ['localization', 'missing translations', 'raw translation keys shown', 'add ui text', 'portuguese spanish', 'translation platform'],
  'flag-cleanup': ['remove old feature flag', 'stale flags', 'technical debt cleanup', 'flag fully rolled out', 'archive toggle'],
  'kube-context-check': ['kubernetes cluster switch', 'accidentally changed production', 'kubectl wrong cluster', 'staging cluster', 'scale deployment'],
  'ios-pods-sync': ['ios build fails', 'cocoapods error', 'podfile lock mismatch', 'xcode build', 'native dependencies'],
  'api-versioning': ['breaking api change', 'backward compatibility', 'old app versions', 'deprecate endpoint', 'mobile clients'],
  'renovate-prs': ['dependency upgrade', 'automated update prs', 'next.js major upgrade', 'auth middleware broken', 'package bump'],
  'rabbitmq-startup': ['amqp connection error', 'message broker not ready', 'worker cannot connect', 'wait for container healthy', 'local startup race'],
};
