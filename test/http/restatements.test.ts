/**
 * Extraction stores nothing that only restates the conversation's own instructions
 * (issue 25), end to end through the proxy with the real SDK clients, the real SQLite
 * store and real HTTP. A Claude-Code-shaped session (system prompt, CLAUDE.md in a
 * `<system-reminder>`) and a Codex-shaped one (developer prompt, AGENTS.md in the first
 * user message) each hold a rule; the scripted extraction model, like a careless one,
 * proposes that rule in its own words and one new fact: only the new fact is stored, the
 * model was shown the rule, and `/metrics` counts the dropped proposal. The same proposal
 * from a session whose instructions lack the rule is stored.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { startScriptedUpstream, type ExtractedReflection, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('extraction leaves out what the instructions say');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' });
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});
test.before.each(({ upstream }) => upstream.reset());

const RULE = 'Always run `pnpm lint --fix` before committing; CI rejects unformatted code.';
/** The rule, as a careless extraction model writes it down. */
const RESTATED: ExtractedReflection = {
  kind: 'procedural',
  content: 'The user requires running pnpm lint --fix before every commit, because CI rejects code that is not formatted.',
  topic: 'linting',
  tags: ['lint before commit'],
  turn: null,
};
/** What the session really taught. */
const LEARNT: ExtractedReflection = {
  kind: 'factual',
  content: 'The payments service reads its configuration from services/payments/config.toml; PAYMENTS_ENV picks the section.',
  topic: 'payments service',
  tags: ['payments configuration'],
  turn: null,
};
const QUESTION = 'Where is the payments service configuration?';

const CLAUDE_MD = (rules: string) =>
  '<system-reminder>\nAs you answer the user\'s questions, you can use the following context:\n# claudeMd\n' +
  'Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n' +
  `Contents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\n# Conventions\n${rules}\n- Use pnpm, never npm.\n\n` +
  '      IMPORTANT: this context may or may not be relevant to your tasks.\n</system-reminder>';

/** A Claude Code turn through the Anthropic SDK: its system blocks, CLAUDE.md in a reminder, a mid-conversation system entry. */
async function claudeCodeTurn(agent: TestAgent, rules: string): Promise<void> {
  const client = new Anthropic({ baseURL: agent.baseUrl, apiKey: agent.token, maxRetries: 0 });
  const stream = client.messages.stream({
    model: 'claude-test',
    max_tokens: 1024,
    system: [
      { type: 'text', text: "You are a Claude agent, built on Anthropic's Claude Agent SDK." },
      { type: 'text', text: 'You are an interactive agent that helps users with software engineering tasks. Never guess file paths; read them.' },
    ],
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: CLAUDE_MD(rules) },
          { type: 'text', text: QUESTION },
        ],
      },
      { role: 'system', content: [{ type: 'text', text: '# Environment\n - Primary working directory: /repo\n - Platform: linux' }] },
    ] as any,
  });
  await stream.finalMessage();
}

/** A Codex turn through the openai SDK: the developer prompt, AGENTS.md and the environment as user messages. */
async function codexTurn(agent: TestAgent): Promise<void> {
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  const stream = await client.responses.create({
    model: 'gpt-test',
    stream: true,
    store: false,
    input: [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent running in the Codex CLI. Keep answers short.' }] },
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: `# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n# Conventions\n${RULE}\n- Use pnpm, never npm.\n</INSTRUCTIONS>` }],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>' }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: QUESTION }] },
    ],
  });
  for await (const _event of stream) {
    // Read to the end: the answer must be final for the turn to settle.
  }
}

/** The extraction model of these tests: the restatement and the new fact, whatever the session. */
function carelessExtractor(seen: string[]) {
  return (_request: unknown, text: string): ExtractedReflection[] => {
    seen.push(text);
    return text.includes('payments service') ? [RESTATED, LEARNT] : [];
  };
}

async function droppedCount(engram: TestEngram): Promise<number> {
  const text = await (await fetch(`${engram.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('engram_reflections_dropped_total{reason="restates_instructions"}'));
  assert.ok(line, text);
  return Number(line.split(' ').pop());
}

/** Waits for the new fact, then returns what is stored: both proposals were written in the same call. */
async function storedAfter(engram: TestEngram, agent: TestAgent): Promise<string[]> {
  const stored = await engram.waitForReflections(agent, 1);
  assert.ok(stored.some((r) => r.content === LEARNT.content), JSON.stringify(stored));
  return stored.map((r) => r.content);
}

const sessions = [
  { name: 'Claude Code (CLAUDE.md in a system reminder)', turn: (agent: TestAgent) => claudeCodeTurn(agent, `- ${RULE}`) },
  { name: 'Codex (AGENTS.md in the first user message)', turn: codexTurn },
];

for (const session of sessions) {
  test(`${session.name}: the rule restated is not stored, the new fact is, and the model was shown the rule`, async ({ upstream, engram }) => {
    const seen: string[] = [];
    upstream.setExtractor(carelessExtractor(seen));
    const before = await droppedCount(engram);
    const agent = await engram.createAgent(upstream.url);
    upstream.enqueue({ type: 'text', text: 'It is services/payments/config.toml, by PAYMENTS_ENV.' });
    await session.turn(agent);
    const stored = await storedAfter(engram, agent);
    assert.equal(stored, [LEARNT.content]);
    assert.is(await droppedCount(engram), before + 1);
    // Layer one: the model is told what the instructions already say, before the transcript.
    const message = seen[0];
    const block = /^<instructions-in-context>\n([^]*?)\n<\/instructions-in-context>\n\n/.exec(message);
    assert.ok(block, message);
    assert.ok(block[1].split('\n').includes(RULE), block[1]);
    // The instruction file is in the block, not a turn of the user's.
    const transcript = message.slice(message.indexOf('<transcript>'));
    assert.not.ok(transcript.includes('CI rejects'), transcript);
    assert.ok(transcript.includes(QUESTION), transcript);
  });
}

test('the same proposal from a session whose instructions lack the rule is stored', async ({ upstream, engram }) => {
  upstream.setExtractor(carelessExtractor([]));
  const agent = await engram.createAgent(upstream.url);
  await claudeCodeTurn(agent, '- Write commit messages in the imperative mood.');
  const stored = await storedAfter(engram, agent);
  assert.equal(stored.sort(), [LEARNT.content, RESTATED.content].sort());
});

test.run();
