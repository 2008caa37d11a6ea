/**
 * What learning costs upstream (issue 13, "learning stays cheap"): an agent-like session
 * (bench/agent-session.ts) runs through Engram over HTTP as Claude Code runs one: Messages
 * API, streamed, the system prompt, the tool definitions and the whole history re-sent at
 * every step, tool outputs as `tool_result` blocks. The scripted upstream answers each step
 * with the task's next tool call, then with the final answer. After each task the phase
 * waits until its extraction has run (a short settle time; the next task comes after it,
 * as a user reads an answer before asking more), so every turn is extracted, none skipped.
 *
 * The agent also stores a memory or two per task on purpose (MCP `remember`), without tags
 * as agents often do; the tagging job tags them on the same upstream (its interval set
 * short, so it runs within the task, where a deployment's 5 minutes would batch more of
 * them per call). The phase waits for that too.
 *
 * The figure is `learning bytes / conversation bytes`, learning being extraction and
 * tagging, all counted where the upstream receives them: request bodies offering
 * `record_reflections`, those offering `record_tags`, and all the others. Extraction and
 * tagging are reported apart too. The phase also checks that what carries the lessons
 * reached extraction (every user request, every final answer, the tool output lines each
 * task names as its evidence) and that every memory remembered was tagged.
 *
 * The system prompt and tools here are a few KB; real clients send tens of KB of them with
 * every request, so a real session's conversation bytes are larger and its ratio lower.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Reply } from '../test/support/scripted-upstream/index.js';
import { agentSession, type AgentTask, type ToolStep } from './agent-session.js';
import type { EngramHello } from './engram-process.js';
import { startChild, type Child } from './ipc.js';
import type { ByteTally, UpstreamHello } from './upstream-process.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** One way of running the session's tasks, and what it cost. */
export interface ExtractionCostRun {
  conversation_requests: number;
  /** Request bodies of the conversation, as the upstream received them (Engram's insertions included). */
  conversation_bytes: number;
  extraction_requests: number;
  extraction_bytes: number;
  /** Tagging calls (the memories remembered without tags), and their bytes. */
  tagging_requests: number;
  tagging_bytes: number;
  /** `(extraction_bytes + tagging_bytes) / conversation_bytes`: what learning costs. */
  ratio: number;
  /** `extraction_bytes / conversation_bytes`. */
  extraction_ratio: number;
  /** `tagging_bytes / conversation_bytes`. */
  tagging_ratio: number;
  /** Memories remembered without tags, and how many of them the tagging job tagged. */
  remembered: number;
  tagged: number;
  /** User requests, final answers and evidence lines, and how many reached extraction. */
  lessons: number;
  lessons_kept: number;
  missing: string[];
}

export interface ExtractionCostResult {
  tasks: number;
  settle_ms: number;
  /** Tool output in the session, each counted once. */
  tool_output_bytes: number;
  /** How far apart an agent's tagging jobs were (`ENGRAM_TAGGING_INTERVAL_MS`). */
  tagging_interval_ms: number;
  /** The tasks one after the other in one conversation, as a session runs them: the figure with the target. */
  session: ExtractionCostRun;
  /**
   * Each task alone in a fresh conversation (a `/clear` before each, or one `codex exec`
   * per task): the least history re-sent, so the highest ratio; reported beside.
   */
  task_alone: ExtractionCostRun;
  dead_letters: number;
}

const SYSTEM = [
  'You are an interactive coding agent working in a monorepo on the user\'s machine. Use the tools below to read, search, run and edit; explain what you found and what you changed.',
  'Keep answers short and concrete: name files, commands and the reason for a change. Do not invent file contents: read a file before editing it, and re-read it when an edit fails.',
  'Prefer the repository\'s own scripts (npm scripts, make targets) to ad-hoc commands. Run the tests that cover a change before saying it is done; report failures you could not fix.',
  'Never commit, push or delete branches unless asked. Never print secrets from .env files or vaults; refer to them by name.',
  'When a command fails, read its error and the lines around it before trying again; do not retry the same command unchanged.',
  'Tool results may be long: the relevant lines are usually the errors, the summary at the end, and the command echoed at the start.',
].join('\n\n').repeat(3);

const TOOLS = [
  { name: 'Bash', description: 'Executes a bash command in a persistent shell session with an optional timeout. Use it for builds, tests, git and package managers; prefer Read, Grep and Glob for files.', input_schema: { type: 'object', properties: { command: { type: 'string', description: 'The command to execute' }, description: { type: 'string', description: 'What the command does, in 5-10 words' }, timeout: { type: 'number', description: 'Optional timeout in milliseconds (max 600000)' } }, required: ['command'], additionalProperties: false } },
  { name: 'Read', description: 'Reads a file from the local filesystem. Lines are numbered like cat -n. Use offset and limit for long files.', input_schema: { type: 'object', properties: { file_path: { type: 'string', description: 'The absolute path to the file to read' }, offset: { type: 'number' }, limit: { type: 'number' } }, required: ['file_path'], additionalProperties: false } },
  { name: 'Edit', description: 'Performs an exact string replacement in a file. The old_string must be unique in the file; read the file first.', input_schema: { type: 'object', properties: { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } }, required: ['file_path', 'old_string', 'new_string'], additionalProperties: false } },
  { name: 'Grep', description: 'Searches file contents with ripgrep regular expressions; returns matching lines, files or counts.', input_schema: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' }, glob: { type: 'string' }, output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] }, '-n': { type: 'boolean' } }, required: ['pattern'], additionalProperties: false } },
  { name: 'Glob', description: 'Fast file pattern matching; returns matching paths sorted by modification time.', input_schema: { type: 'object', properties: { pattern: { type: 'string' }, path: { type: 'string' } }, required: ['pattern'], additionalProperties: false } },
];

type Message = { role: 'user' | 'assistant'; content: unknown[] };

const toolUseId = (task: number, step: number) => `toolu_bench_${task}_${step}`;

/** The upstream's answer to each step of `task`: its tool calls, then its final answer. */
function replies(task: AgentTask, index: number): Reply[] {
  return [
    ...task.steps.map((step, i): Reply => ({ type: 'tool_call', name: step.tool, arguments: step.input, id: toolUseId(index, i), text: step.say })),
    { type: 'text', text: task.answer },
  ];
}

/** The history entries a client appends after the upstream called `step`'s tool. */
function stepMessages(step: ToolStep, id: string): Message[] {
  return [
    { role: 'assistant', content: [{ type: 'text', text: step.say }, { type: 'tool_use', id, name: step.tool, input: step.input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: step.output, ...(step.failed ? { is_error: true } : {}) }] },
  ];
}

/** Every string in a JSON value, joined: the text an extraction request carried. */
function strings(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(strings).join('\n');
  if (value !== null && typeof value === 'object') return Object.values(value).map(strings).join('\n');
  return '';
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`extraction cost: timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The agent's MCP `remember` and `forget`, over Engram's MCP endpoint with the agent's token. */
async function memoryTools(engram: EngramHello): Promise<{ remember(content: string): Promise<string>; forget(id: string): Promise<void>; close(): Promise<void> }> {
  const client = new Client({ name: 'engram-bench', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${engram.baseUrl}/v0/mcp`), { requestInit: { headers: { authorization: `Bearer ${engram.token}` } } }));
  return {
    async remember(content) {
      const result = await client.callTool({ name: 'remember', arguments: { content, kind: 'procedural' } });
      const id = (result.structuredContent as { id?: string } | undefined)?.id;
      if (result.isError || !id) throw new Error(`extraction cost: remember failed: ${JSON.stringify(result.content)}`);
      return id;
    },
    async forget(id) {
      await client.callTool({ name: 'forget', arguments: { id } });
    },
    close: () => client.close(),
  };
}

export async function extractionCost(upstream: Child<UpstreamHello>, options: { settleMs: number; taggingIntervalMs: number }): Promise<ExtractionCostResult> {
  const engram = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
    env: {
      BENCH_UPSTREAM_URL: upstream.hello.url,
      BENCH_REFLECTIONS: '0',
      BENCH_SETTLE_MS: String(options.settleMs),
      BENCH_TAGGING_INTERVAL_MS: String(options.taggingIntervalMs),
    },
  });
  const tools = await memoryTools(engram.hello);
  const tagsBy = async (id: string): Promise<string | null> => {
    const response = await fetch(`${engram.hello.baseUrl}/reflections/${id}`, { headers: { authorization: `Bearer ${engram.hello.token}` } });
    return ((await response.json()) as { tags_by?: string | null }).tags_by ?? null;
  };
  type Queue = { pending: number; taggingPending: number; deadLetters: number };
  const tasks = agentSession();
  const tally = () => upstream.call<ByteTally & { extractionBodies: string[] }>('bytes');
  const send = async (session: string, messages: Message[]) => {
    const response = await fetch(`${engram.hello.baseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': engram.hello.token, 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': session },
      body: JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 32_000, stream: true, system: [{ type: 'text', text: SYSTEM }], tools: TOOLS, messages }),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`extraction cost: Engram answered ${response.status}: ${text.slice(0, 300)}`);
  };

  /** Runs every task, in one conversation or each in its own, and counts what the upstream received. */
  const run = async (shape: 'session' | 'task_alone'): Promise<ExtractionCostRun> => {
    await upstream.call('reset');
    await upstream.call('resetBytes', { keepTranscripts: true });
    let messages: Message[] = [];
    const remembered: string[] = [];
    for (const [index, task] of tasks.entries()) {
      if (shape === 'task_alone') messages = [];
      const session = `bench-extraction-cost-${shape}-${shape === 'session' ? 0 : index}`;
      await upstream.call('enqueueReplies', { replies: replies(task, index) });
      const before = (await tally()).extractionRequests;
      messages.push({ role: 'user', content: [{ type: 'text', text: task.ask }] });
      for (const [i, step] of task.steps.entries()) {
        await send(session, messages);
        messages.push(...stepMessages(step, toolUseId(index, i)));
      }
      await send(session, messages);
      messages.push({ role: 'assistant', content: [{ type: 'text', text: task.answer }] });
      // What the agent stores on purpose, without tags, before the conversation settles.
      for (const content of task.remembers) remembered.push(await tools.remember(content));
      // The task's job is queued once its final answer settles, and done when nothing is
      // pending; it queues the tagging job, which runs at the start of the next interval.
      await until(`task ${index + 1}'s extraction`, async () => (await tally()).extractionRequests > before);
      await until('the extraction and tagging queues to empty', async () => {
        const queue = await engram.call<Queue>('extractionQueue');
        return queue.pending + queue.taggingPending === 0;
      });
    }
    const counted = await tally();
    const tagged = (await Promise.all(remembered.map(tagsBy))).filter((author) => author === 'tagging').length;
    // Forgotten, so the next way of running the tasks remembers (and tags) them afresh.
    for (const id of remembered) await tools.forget(id);
    const conversationBytes = Math.max(1, counted.conversationBytes);
    const seen = counted.extractionBodies.map((body) => strings(JSON.parse(body))).join('\n');
    const needles = tasks.flatMap((task) => [task.ask, task.answer, ...task.evidence]);
    const missing = needles.filter((needle) => !seen.includes(needle));
    return {
      conversation_requests: counted.conversationRequests,
      conversation_bytes: counted.conversationBytes,
      extraction_requests: counted.extractionRequests,
      extraction_bytes: counted.extractionBytes,
      tagging_requests: counted.taggingRequests,
      tagging_bytes: counted.taggingBytes,
      ratio: (counted.extractionBytes + counted.taggingBytes) / conversationBytes,
      extraction_ratio: counted.extractionBytes / conversationBytes,
      tagging_ratio: counted.taggingBytes / conversationBytes,
      remembered: remembered.length,
      tagged,
      lessons: needles.length,
      lessons_kept: needles.length - missing.length,
      missing: missing.map((needle) => needle.slice(0, 120)),
    };
  };

  try {
    const session = await run('session');
    const taskAlone = await run('task_alone');
    const { deadLetters } = await engram.call<Queue>('extractionQueue');
    return {
      tasks: tasks.length,
      settle_ms: options.settleMs,
      tagging_interval_ms: options.taggingIntervalMs,
      tool_output_bytes: tasks.reduce((sum, task) => sum + task.steps.reduce((n, step) => n + Buffer.byteLength(step.output), 0), 0),
      session,
      task_alone: taskAlone,
      dead_letters: deadLetters,
    };
  } finally {
    await tools.close().catch(() => undefined);
    await upstream.call('resetBytes', {});
    await upstream.call('reset');
    await engram.stop();
  }
}
