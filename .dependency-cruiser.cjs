/**
 * Engram's layering (STYLE.md), checked on every `npm test`:
 *   http, mcp, cli -> conversation -> memory, control -> ports <- adapters
 * domain imports only domain (no node:*, no package); protocols only domain; machines
 * only xstate and domain; redaction only domain and its two rule packages.
 * Run alone: `npm run lint:layers`.
 */
const ours = (...dirs) => `^src/(${dirs.join('|')})/`;
const ENGINES = '^(better-sqlite3|@nats-io/|weaviate-client)';
const PACKAGES = ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];

module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment:
        'src/domain holds pure types and functions: it imports domain and nothing else, not a node:* module, not a package, not even for a type. ' +
        'Pure code runs anywhere, and importing it does nothing.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'redaction-only-domain',
      comment: 'The secret scanner (src/redaction) is a leaf room: it imports domain and itself only.',
      severity: 'error',
      from: { path: '^src/redaction/' },
      to: { path: '^src/', pathNot: ['^src/redaction/', '^src/domain/'] },
    },
    {
      name: 'redaction-only-its-rule-packages',
      comment: 'The packages redaction runs on: smol-toml (reads gitleaks.toml) and secretlint (the recommended ruleset).',
      severity: 'error',
      from: { path: '^src/redaction/' },
      to: { dependencyTypes: PACKAGES, pathNot: '(^|/)node_modules/(smol-toml|@secretlint/)' },
    },
    {
      name: 'redaction-reads-its-rules-in-one-place',
      comment: 'Only redact.ts (loadRedaction) reads the rule files; the rest of the scanner is pure.',
      severity: 'error',
      from: { path: '^src/redaction/', pathNot: '^src/redaction/redact\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'redaction-above-the-pure-layers',
      comment: 'Domain, protocols, ports and machines never redact: redaction is for text that leaves the request path.',
      severity: 'error',
      from: { path: [ours('domain', 'protocols', 'ports'), '^machines/'] },
      to: { path: '^src/redaction/' },
    },
    {
      name: 'observability-never-imports-surfaces',
      comment: 'Observability watches the core; the HTTP, MCP and CLI surfaces use it, never the other way round.',
      severity: 'error',
      from: { path: '^src/observability/' },
      to: { path: ours('http', 'mcp', 'cli') },
    },
    {
      name: 'protocols-only-domain',
      comment: 'Wire protocols parse, inject and render from domain types only.',
      severity: 'error',
      from: { path: '^src/protocols/' },
      to: { path: '^src/', pathNot: ['^src/domain/', '^src/protocols/', '^src/errors\\.ts$'] },
    },
    {
      name: 'ports-only-domain',
      comment: 'Ports are interfaces over domain types: any engine can implement them.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/', pathNot: ['^src/domain/', '^src/ports/'] },
    },
    {
      name: 'machines-only-xstate-and-domain',
      comment: 'Machines only describe: no I/O, no implementations.',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: ['^src/domain/', '^machines/', '(^|/)node_modules/xstate/'] },
    },
    {
      name: 'core-never-reaches-up-or-into-engines',
      comment: 'The core (conversation, memory, control, archive, streaming, transcripts, security, accounts, oauth) never imports http, mcp, cli, fastify or an adapter.',
      severity: 'error',
      from: { path: ours('conversation', 'memory', 'control', 'archive', 'streaming', 'transcripts', 'security', 'accounts', 'oauth') },
      to: { path: [ours('http', 'mcp', 'cli', 'adapters'), '(^|/)node_modules/(fastify|@fastify/)', `(^|/)node_modules/${ENGINES.slice(1)}`] },
    },
    {
      name: 'adapters-never-import-http-or-core',
      comment: 'Adapters implement ports; they never import the HTTP layer or the flows that use them.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: ours('http', 'mcp', 'cli', 'conversation', 'control') },
    },
    {
      name: 'only-adapters-import-engines',
      comment: 'better-sqlite3, the NATS client and weaviate-client are imported by their adapters only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/adapters/' },
      to: { path: `(^|/)node_modules/${ENGINES.slice(1)}` },
    },
    {
      name: 'config-is-a-leaf',
      comment: 'config.ts reads the environment; it depends on nothing of ours but errors and domain constants.',
      severity: 'error',
      from: { path: '^src/config\\.ts$' },
      to: { path: '^src/', pathNot: ['^src/config\\.ts$', '^src/errors\\.ts$', '^src/domain/'] },
    },
    {
      name: 'only-config-reads-env',
      comment: 'Nothing imports config.ts below the composition root but for its types.',
      severity: 'error',
      from: { path: ours('domain', 'protocols', 'ports', 'adapters', 'security') },
      to: { path: '^src/config\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    // The clients room: src/clients/<kind>/ sits above domain, protocols, transcripts and
    // connect, below conversation, memory, http and cli; a kind is one folder.
    {
      name: 'clients-below-the-core',
      comment: 'A client profile knows the wire, its transcripts and its connect files, never the flows that use it (nor config.ts: only its types).',
      severity: 'error',
      from: { path: '^src/clients/' },
      to: { path: '^src/', pathNot: [ours('clients', 'domain', 'protocols', 'transcripts', 'connect'), '^src/errors\\.ts$'] },
    },
    {
      name: 'nothing-below-clients-imports-them',
      comment: 'Domain, protocols, ports, transcripts and connect take what a client says as parameters; they never read the profiles.',
      severity: 'error',
      from: { path: ours('domain', 'protocols', 'ports', 'transcripts', 'connect') },
      to: { path: '^src/clients/' },
    },
    {
      name: 'one-folder-per-client',
      comment: 'A client kind never imports another kind: what two share lives in the generic rooms.',
      severity: 'error',
      from: { path: '^src/clients/([^/]+)/' },
      to: { path: '^src/clients/[^/]+/', pathNot: '^src/clients/$1/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: { path: '^src/' },
      // A type-only import back (a module naming the type of what imports it) is no cycle at run time.
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    exclude: { path: '^(test|bench)/' },
  },
};
