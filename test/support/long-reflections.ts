/**
 * Reflections as extraction writes them: whole sentences with paths, commands and long
 * words. The layout test and the screenshots of docs/dashboard.md use them.
 */
export const LONG_REFLECTIONS = [
  {
    kind: 'factual',
    topic: 'deployment',
    tags: ['deployment', 'kubernetes', 'staging-environment'],
    content:
      'The staging deployment is described in infrastructure/kubernetes/overlays/staging/kustomization.yaml; its configuration values come from the conversation-service Helm chart, and the database credentials are read from the sealed secret named staging-postgresql-credentials.',
  },
  {
    kind: 'procedural',
    topic: 'testing',
    tags: ['integration-tests', 'database'],
    content:
      'Before running the integration tests, start the database with docker compose up postgresql and run npm run db:migrate, otherwise every repository test fails with "relation does not exist" and the failure looks like a flaky connection.',
  },
  {
    kind: 'factual',
    topic: 'documentation',
    tags: ['documentation'],
    content: 'The release checklist lives in docs/RELEASING.md, and the changelog is generated from conventional commit messages by the release-please workflow.',
  },
  {
    kind: 'procedural',
    topic: 'conversation-handling',
    tags: ['internationalisation', 'internationalization'],
    content:
      'Internationalisation strings are extracted with npm run i18n:extract; never edit the generated translations directly, because the next extraction overwrites them without warning and the translators lose their work.',
  },
] as const;
