import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildExtractionJob, extractionConsumerOptions, renderTranscript, type BuildExtractionJobInput } from '../../src/memory/extraction.js';
import type { Turn } from '../../src/domain/transcript.js';

const base = (turns: Turn[], overrides: Partial<BuildExtractionJobInput> = {}): BuildExtractionJobInput => ({
  agentId: 'agt_1',
  orgId: 'org_1',
  conversationId: 'cnv_1',
  protocol: 'chat-completions',
  model: 'gpt-test',
  turns,
  watermark: 0,
  maxBytes: 48 * 1024,
  settledAt: 5_000,
  ...overrides,
});

const conversation: Turn[] = [
  { role: 'user', text: 'Where is the deploy script?' },
  { role: 'assistant', text: '[tool call shell({"cmd":"ls tools"})]' },
  { role: 'tool', text: 'deploy.sh\nrelease.sh' },
  { role: 'assistant', text: 'It is tools/deploy.sh.' },
];

test('takes the turns after the watermark, with their position', () => {
  const job = buildExtractionJob(base(conversation, { watermark: 2 }));
  assert.ok(job);
  assert.is(job.firstTurn, 2);
  assert.is(job.turnCount, 4);
  assert.equal(job.turns, conversation.slice(2));
  assert.is(job.settledAt, 5_000);
  assert.is(job.protocol, 'chat-completions');
});

test('nothing new gives undefined', () => {
  assert.is(buildExtractionJob(base(conversation, { watermark: 4 })), undefined);
  assert.is(buildExtractionJob(base(conversation, { watermark: 9 })), undefined);
  assert.is(buildExtractionJob(base([])), undefined);
  const onlyBlocks: Turn[] = [...conversation, { role: 'user', text: '<engram-reminder>check memory</engram-reminder>' }];
  assert.is(buildExtractionJob(base(onlyBlocks, { watermark: 4 })), undefined);
});

test("strips Engram's blocks and redacts secrets", () => {
  const turns: Turn[] = [
    {
      role: 'user',
      text: 'Deploy with key sk-proj-Ab3dEf9hIjKlMn0pQrStUvWxYz12345\n\n<engram-reflections>\n- [factual] (x) y\n</engram-reflections>',
    },
    { role: 'assistant', text: 'Done.' },
  ];
  const job = buildExtractionJob(base(turns));
  assert.ok(job);
  assert.is(job.turns[0].text, 'Deploy with key [REDACTED:openai_key]');
});

test('cuts a huge tool output in the middle and keeps its ends', () => {
  const output = 'START\n' + 'line of log output\n'.repeat(20_000) + 'END: exit 0';
  const turns: Turn[] = [
    { role: 'user', text: 'Run the build' },
    { role: 'tool', text: output },
    { role: 'assistant', text: 'The build passed.' },
  ];
  const job = buildExtractionJob(base(turns, { maxBytes: 12_000 }));
  assert.ok(job);
  assert.is(job.firstTurn, 0);
  const tool = job.turns[1].text;
  assert.ok(tool.length <= 1_000, String(tool.length));
  assert.ok(tool.startsWith('START'));
  assert.ok(tool.endsWith('END: exit 0'));
  assert.match(tool, /characters omitted/);
});

test('redacts a secret near the ends of a huge output before cutting it', () => {
  const key = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
  const turns: Turn[] = [{ role: 'tool', text: `token ${key}\n` + 'x'.repeat(100_000) + `\ntoken ${key}` }];
  const job = buildExtractionJob(base(turns, { maxBytes: 4_000 }));
  assert.ok(job);
  assert.not.match(job.turns[0].text, /ghp_/);
  assert.match(job.turns[0].text, /\[REDACTED:github_token\]/);
});

test('keeps the most recent turns within maxBytes', () => {
  const turns: Turn[] = Array.from({ length: 40 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    text: `Turn ${i}: ${'words '.repeat(80)}`,
  }));
  const job = buildExtractionJob(base(turns, { maxBytes: 4_096 }));
  assert.ok(job);
  const bytes = job.turns.reduce((n, t) => n + Buffer.byteLength(t.text) + 16, 0);
  assert.ok(bytes <= 4_096, String(bytes));
  assert.is(job.turnCount, 40);
  assert.is(job.firstTurn + job.turns.length, 40);
  assert.ok(job.firstTurn > 0);
  assert.match(job.turns[job.turns.length - 1].text, /^Turn 39:/);
});

test('bounds multi-byte text in bytes, not characters', () => {
  const turns: Turn[] = [{ role: 'user', text: '日本語のテキスト'.repeat(2_000) }];
  const job = buildExtractionJob(base(turns, { maxBytes: 4_096 }));
  assert.ok(job);
  assert.ok(Buffer.byteLength(job.turns[0].text) <= 1_024, String(Buffer.byteLength(job.turns[0].text)));
});

test('a long conversation yields only its most recent turns, within maxBytes', () => {
  const prose = 'The deploy script lives in tools/deploy.sh; run it with --dry-run first, then check the logs. ';
  const code = 'export function deploy(env: string): Promise<void> {\n  return run(`tools/deploy.sh --env=${env}`);\n}\n';
  const turns: Turn[] = Array.from({ length: 200 }, (_, i) => {
    const role = (['user', 'assistant', 'tool'] as const)[i % 3];
    return { role, text: `${i}: ` + (role === 'tool' ? code.repeat(50) : prose.repeat(13)) };
  });
  const input = base(turns);
  assert.ok(turns.reduce((n, t) => n + t.text.length, 0) > 400_000);
  const job = buildExtractionJob(input);
  assert.ok(job && job.firstTurn > 150, String(job?.firstTurn));
});

test('renders a plain transcript, skipping empty turns', () => {
  const text = renderTranscript([
    { role: 'user', text: 'Where is the deploy script?' },
    { role: 'assistant', text: '  ' },
    { role: 'tool', text: 'deploy.sh' },
    { role: 'assistant', text: 'It is tools/deploy.sh.\n' },
  ]);
  assert.is(text, 'User: Where is the deploy script?\n\nTool: deploy.sh\n\nAssistant: It is tools/deploy.sh.');
});

test('consumer options: configured limits, exponential backoff from 5 s capped at 5 min', () => {
  const options = extractionConsumerOptions({ ackWaitMs: 120_000, maxDeliver: 5, concurrency: 2 });
  assert.is(options.ackWaitMs, 120_000);
  assert.is(options.maxDeliver, 5);
  assert.is(options.concurrency, 2);
  assert.equal([1, 2, 3, 10].map(options.backoffMs), [5_000, 10_000, 20_000, 300_000]);
});

test.run();
