/**
 * What the bench sends and stores: reflection texts a coding agent would have learnt
 * (file locations, commands, pitfalls), questions that are about some of them, and
 * request bodies of a given size in either protocol. Deterministic, so runs compare.
 */

/** Deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SERVICES = [
  'billing-api', 'auth-service', 'search-indexer', 'web-frontend', 'payments-worker', 'notification-hub',
  'user-profile', 'reporting-etl', 'edge-gateway', 'job-scheduler', 'inventory-sync', 'media-transcoder',
  'fraud-scorer', 'ledger-core', 'email-renderer', 'feature-flags', 'audit-trail', 'geo-lookup',
  'pricing-engine', 'session-store', 'cart-service', 'recommendation-ranker', 'webhook-relay', 'tenant-admin',
  'metrics-collector', 'pdf-exporter', 'chat-backend', 'cdn-purger', 'oauth-bridge', 'invoice-mailer',
  'shipping-quotes', 'catalog-importer', 'rate-limiter', 'backup-runner', 'schema-registry', 'log-shipper',
  'image-resizer', 'sms-gateway', 'kyc-verifier', 'loyalty-points', 'tax-calculator', 'warehouse-robotics',
  'survey-engine', 'calendar-sync', 'doc-search', 'translation-memory', 'video-captions', 'support-desk',
  'partner-portal', 'data-lake-loader',
];

const DIRS = ['services', 'apps', 'packages', 'cmd', 'internal'];
const FILES = ['settings.yaml', 'config.toml', 'app.env', 'values.yaml', 'limits.json'];
const DEPS = ['postgres', 'redis', 'kafka', 'minio', 'elasticsearch', 'rabbitmq', 'localstack', 'mailhog'];
const COMMANDS = ['make codegen', 'npm run build:schemas', 'go generate ./...', 'pnpm prisma generate', 'cargo sqlx prepare'];
const PITFALLS = ['stale generated clients', 'a broken container image', 'mismatched protobuf stubs', 'an empty config map'];
const ERRORS = ['ETIMEDOUT', 'ECONNRESET', 'HTTP 429', 'deadlock detected', 'OOMKilled'];
const BRANCHES = ['release/2024.10', 'main', 'hotfix/payments', 'develop'];
const PORTS = ['5433', '6380', '9093', '8081', '9200'];

interface Template {
  kind: 'factual' | 'procedural';
  topic: string;
  text: (s: string, pick: <T>(list: T[]) => T) => string;
  question: (s: string, pick: <T>(list: T[]) => T) => string;
}

const TEMPLATES: Template[] = [
  {
    kind: 'factual', topic: 'configuration',
    text: (s, p) => `The ${s} configuration lives in ${p(DIRS)}/${s}/config/${p(FILES)}; edit that file, not the generated copy under dist/.`,
    question: (s, p) => `Where is the ${s} configuration file? I need to change a setting in ${p(FILES)} for ${s}.`,
  },
  {
    kind: 'procedural', topic: 'deployment',
    text: (s, p) => `Before deploying ${s}, run \`${p(COMMANDS)}\`; skipping it ships ${p(PITFALLS)} to production.`,
    question: (s) => `I am about to deploy ${s} to production. What do I have to run before the deploy of ${s}?`,
  },
  {
    kind: 'procedural', topic: 'testing',
    text: (s, p) => `Integration tests of ${s} need ${p(DEPS)} running: start it with \`docker compose up -d ${p(DEPS)}\` before \`npm test\`.`,
    question: (s) => `The integration tests of ${s} fail on my machine. What needs to be running before the ${s} tests?`,
  },
  {
    kind: 'factual', topic: 'logs',
    text: (s, p) => `${s} writes its logs to /var/log/${s}/current.log; grep for ${p(ERRORS)} when its requests time out.`,
    question: (s) => `Requests to ${s} are timing out. Where are the ${s} logs and what should I grep for?`,
  },
  {
    kind: 'procedural', topic: 'migrations',
    text: (s, p) => `Database migrations of ${s} are in ${p(DIRS)}/${s}/migrations; never edit an applied migration, add a new one with \`make migration name=...\`.`,
    question: (s) => `I need to change a column in the ${s} database. How do the ${s} migrations work?`,
  },
  {
    kind: 'factual', topic: 'local development',
    text: (s, p) => `Locally ${s} listens on port ${p(PORTS)}; the port in the README is outdated.`,
    question: (s) => `Which port does ${s} listen on when I run it locally?`,
  },
  {
    kind: 'procedural', topic: 'releases',
    text: (s, p) => `Hotfixes for ${s} branch from ${p(BRANCHES)} and need a changelog entry, or the release pipeline of ${s} rejects the tag.`,
    question: (s) => `How do I ship a hotfix for ${s}? Which branch and what does the release pipeline check?`,
  },
  {
    kind: 'factual', topic: 'ownership',
    text: (s, p) => `${s} is owned by the ${p(['platform', 'payments', 'growth', 'data', 'identity'])} team; page them through #${s}-oncall, not the general channel.`,
    question: (s) => `Who owns ${s}, and how do I reach the ${s} on-call?`,
  },
  {
    kind: 'procedural', topic: 'debugging',
    text: (s, p) => `When ${s} returns ${p(ERRORS)}, check the connection pool size in ${p(FILES)} first; raising the timeout only hides it.`,
    question: (s, p) => `${s} keeps returning ${p(ERRORS)} under load. How should I debug ${s}?`,
  },
  {
    kind: 'factual', topic: 'secrets',
    text: (s) => `${s} reads its credentials from the vault path secret/${s}/runtime; local runs use .env.local, which is git-ignored.`,
    question: (s) => `Where does ${s} get its credentials from, locally and in production?`,
  },
];

export interface ReflectionSeed {
  kind: 'factual' | 'procedural';
  content: string;
  topic: string;
  tags: string[];
}

/**
 * `count` distinct reflections: every (service, template) pair first, then variants with
 * other picks and a note, so 1,000 or 10,000 all read like real memories.
 */
export function reflectionSeeds(count: number, seed = 1): ReflectionSeed[] {
  const random = prng(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  const notes = ['', ' (since the 2024 migration)', ' (see the runbook)', ' (CI does the same)', ' (confirmed twice)'];
  const seen = new Set<string>();
  const out: ReflectionSeed[] = [];
  for (let round = 0; out.length < count && round < 1000; round++) {
    for (const template of TEMPLATES) {
      for (const service of SERVICES) {
        if (out.length >= count) break;
        const content = template.text(service, pick) + (round === 0 ? '' : pick(notes) + (round > 4 ? ` [v${round}]` : ''));
        if (seen.has(content)) continue;
        seen.add(content);
        out.push({ kind: template.kind, content, topic: `${service} ${template.topic}`, tags: [service, template.topic] });
      }
    }
  }
  return out;
}

/** Questions a user would ask about the stored services, in a fixed order. */
export function questions(count: number, seed = 2): string[] {
  const random = prng(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)];
  return Array.from({ length: count }, () => pick(TEMPLATES).question(pick(SERVICES), pick));
}

const SYSTEM = 'You are a careful coding assistant working in a large monorepo. Prefer small, reviewed changes. ';
export const CODE_LINE = '  const result = await client.request({ path: "/v1/items", method: "GET", headers }); // fetch the page\n';

export type Protocol = 'chat' | 'messages' | 'responses';

/** The tool a Responses body declares, in that API's flat function shape. */
const RESPONSES_TOOLS = [
  {
    type: 'function',
    name: 'read_file',
    description: 'Read one file of the repository and return its text.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  },
];

/** A Responses input message item (`input_text` for user/developer, `output_text` for the assistant). */
export function responsesMessage(role: 'developer' | 'user' | 'assistant', text: string): Record<string, unknown> {
  return { type: 'message', role, content: [{ type: role === 'assistant' ? 'output_text' : 'input_text', text }] };
}

export interface BodyTemplate {
  protocol: Protocol;
  /** Body bytes for request `n`: a fresh conversation (its opening carries `n`) asking `asks[n]`. */
  body(n: number, stream?: boolean): Buffer;
  /** Size of a body in bytes. */
  bytes: number;
}

const NONCE = '\u0000nonce\u0000';
const ASK = '\u0000ask\u0000';

/**
 * A request of about `targetBytes`: system prompt, a history of tool-using turns padded
 * with code, and a final user question from `asks`. Responses bodies carry `input`
 * items instead: a developer message, then user/assistant messages (the assistant
 * quoting the code), and declare a `read_file` tool. The first user message carries a
 * nonce so each request is a new conversation for Engram. The JSON is built once and
 * spliced per request, so the load generator spends little time making bodies.
 */
export function bodyTemplate(protocol: Protocol, targetBytes: number, asks: string[]): BodyTemplate {
  const history: unknown[] = [];
  const turn = (i: number, lines: number) => {
    const code = CODE_LINE.repeat(lines);
    if (protocol === 'responses') {
      history.push(responsesMessage('user', `Show me src/module-${i}.ts.`), responsesMessage('assistant', `Here is src/module-${i}.ts:\n${code}`));
    } else if (protocol === 'messages') {
      history.push(
        { role: 'assistant', content: [{ type: 'text', text: `Let me read file ${i}.` }, { type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/module-${i}.ts` } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: code }] },
      );
    } else {
      history.push(
        { role: 'assistant', content: null, tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: `src/module-${i}.ts` }) } }] },
        { role: 'tool', tool_call_id: `call_${i}`, content: code },
      );
    }
  };
  const build = (stream: boolean): string => {
    const opening = `Task ${NONCE}: help me with the services in this repository.`;
    if (protocol === 'responses') {
      const input = [responsesMessage('developer', SYSTEM.repeat(8)), responsesMessage('user', opening), ...history, responsesMessage('user', ASK)];
      return JSON.stringify({ model: 'gpt-4o-mini', input, tools: RESPONSES_TOOLS, stream });
    }
    const first = { role: 'user', content: opening };
    const last = { role: 'user', content: ASK };
    const model = protocol === 'messages' ? 'claude-sonnet-4-6' : 'gpt-4o-mini';
    const body: Record<string, unknown> = protocol === 'messages'
      ? { model, max_tokens: 1024, system: SYSTEM.repeat(8), messages: [first, ...history, last], stream }
      : { model, messages: [{ role: 'system', content: SYSTEM.repeat(8) }, first, ...history, last], stream };
    return JSON.stringify(body);
  };
  const typical = 100 + Math.max(...asks.map((a) => a.length));
  const size = () => Buffer.byteLength(build(false)) + typical;
  // Grow the history with 40-line tool results, then top up with one smaller turn.
  for (let i = 0; size() + 40 * CODE_LINE.length < targetBytes; i++) turn(i, 40);
  const rest = Math.floor((targetBytes - size() - 200) / CODE_LINE.length);
  if (rest > 0) turn(9999, rest);
  const split = (json: string) => {
    const [head, afterNonce] = json.split(JSON.stringify(NONCE).slice(1, -1));
    const [middle, tailPart] = afterNonce.split(JSON.stringify(ASK).slice(1, -1));
    return { head, middle, tail: tailPart };
  };
  const parts = { false: split(build(false)), true: split(build(true)) };
  const body = (n: number, stream = false): Buffer => {
    const p = parts[String(stream) as 'true' | 'false'];
    return Buffer.from(p.head + String(n).padStart(7, '0') + p.middle + JSON.stringify(asks[n % asks.length]).slice(1, -1) + p.tail);
  };
  return { protocol, bytes: body(0).length, body };
}

/** The multi-turn workload's agent (`multi-turn.ts`): its system prompt and its answers. */
export const SYSTEM_BYTES = 4096;
export const AGENT_SYSTEM = (() => {
  const line = 'You are a coding agent in a large monorepo. Read before you edit, run the tests that cover a change, and name files and commands in your answers. ';
  return line.repeat(Math.ceil(SYSTEM_BYTES / line.length)).slice(0, SYSTEM_BYTES);
})();
/** About 2 KB: what an agent answers, an explanation and the code it changed. */
export const ANSWER = (turn: number) => `Turn ${turn}: I read the module and changed the request loop; here is the new code:\n${CODE_LINE.repeat(19)}`;
/**
 * What the scripted upstream answers a request of the multi-turn workload (its system prompt is
 * `AGENT_SYSTEM`): the agent's answer to the turn, numbered by the answers before it. The client
 * sends that answer back with the next turn, as real clients send back what they got (and
 * as Engram finds a conversation by: its opening and its first answer). Undefined for any
 * other request.
 */
export function workloadAnswer(body: unknown): string | undefined {
  const messages = (body as { messages?: Array<{ role?: unknown; content?: unknown }> } | null)?.messages;
  if (!Array.isArray(messages) || messages[0]?.content !== AGENT_SYSTEM) return undefined;
  return ANSWER(messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content.startsWith('Turn ')).length + 1);
}
