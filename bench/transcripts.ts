/**
 * Transcript uploads (issue 5): a coding CLI's stop hook posts its whole session file,
 * 20 MB for a long session, and must get its 2xx within 1 s while Engram parses the body
 * as a stream with bounded memory. Synthetic Codex rollouts (the current format, with the
 * lines a real rollout carries: event_msg duplicates, encrypted reasoning, long tool
 * outputs) are posted to the Engram child over HTTP: fresh sessions, the same file again
 * (recognised as unchanged), the file grown by a few turns, and a 60 MB one to show that
 * memory does not follow the body's size.
 */
import { randomBytes } from 'node:crypto';
import type { EngramHello } from './engram-process.js';
import type { Child } from './ipc.js';
import { summarise } from './stats.js';

export interface UploadTiming {
  body_bytes: number;
  status: number;
  ms: number;
  answer: string;
}

export interface TranscriptBenchResult {
  /** Fresh 20 MB sessions: time from the first byte sent to the 2xx answer. */
  fresh_20mb: { n: number; p50_ms: number; max_ms: number; statuses: number[]; turns: number };
  unchanged_20mb: UploadTiming;
  grown_20mb: UploadTiming;
  upload_60mb: UploadTiming;
  /** Engram child's RSS: before, peak during the 20 MB uploads, peak during the 60 MB one. */
  rss_before: number;
  rss_peak_20mb: number;
  rss_peak_60mb: number;
}

/** A Codex rollout of about `bytes` bytes for session `id`, and `extraTurns` more at the end when asked. */
export function syntheticRollout(id: string, bytes: number, extraTurns = 0): { text: string; turns: number } {
  const at = (n: number) => new Date(Date.UTC(2026, 10, 22, 3, 0, 0, n)).toISOString();
  const lines: string[] = [
    JSON.stringify({ timestamp: at(0), type: 'session_meta', payload: { id, session_id: id, cwd: '/work/app', originator: 'codex_exec', cli_version: '0.169.0', base_instructions: { text: 'You are Codex. '.repeat(1500) } } }),
    JSON.stringify({ timestamp: at(1), type: 'turn_context', payload: { turn_id: 't0', cwd: '/work/app', model: 'gpt-5' } }),
  ];
  let size = lines.reduce((sum, line) => sum + line.length + 1, 0);
  let turn = 0;
  const addTurn = () => {
    const n = turn++;
    const output = `Process exited with code ${n % 7 === 0 ? 1 : 0}\nOutput:\n` + `src/module${n}.ts:${n}: warning unused import\n`.repeat(180);
    const turnLines = [
      { type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Step ${n}: fix the warnings in src/module${n}.ts and run the tests.` }] } },
      { type: 'event_msg', payload: { type: 'user_message', message: `Step ${n}: fix the warnings in src/module${n}.ts and run the tests.` } },
      { type: 'response_item', payload: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Looking at the file.' }], encrypted_content: randomBytes(900).toString('base64') } },
      { type: 'response_item', payload: { type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: `npm test -- src/module${n}.ts` }), call_id: `call_${n}` } },
      { type: 'response_item', payload: { type: 'function_call_output', call_id: `call_${n}`, output } },
      { type: 'event_msg', payload: { type: 'exec_command_end', call_id: `call_${n}`, aggregated_output: output, exit_code: 0 } },
      { type: 'response_item', payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Fixed module ${n}: the tests need \`npm run build\` first because they import dist/.` }] } },
      { type: 'event_msg', payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 1000 * n, output_tokens: 50 * n } } } },
    ].map((line, i) => JSON.stringify({ timestamp: at(2 + n * 8 + i), ...line }));
    lines.push(...turnLines);
    size += turnLines.reduce((sum, line) => sum + line.length + 1, 0);
  };
  while (size < bytes) addTurn();
  for (let i = 0; i < extraTurns; i++) addTurn();
  // Each synthetic turn is four conversation turns: user, tool call, tool output, assistant.
  return { text: lines.join('\n') + '\n', turns: turn * 4 };
}

async function post(baseUrl: string, token: string, body: Buffer): Promise<UploadTiming> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/transcripts/codex`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
  const answer = await response.text();
  return { body_bytes: body.length, status: response.status, ms: performance.now() - started, answer: answer.slice(0, 300) };
}

export async function transcriptUploads(engram: Child<EngramHello>, options: { uploads: number }): Promise<TranscriptBenchResult> {
  const { baseUrl, token } = engram.hello;
  const files = Array.from({ length: options.uploads }, (_, i) => syntheticRollout(`bench-session-${i}-${Date.now()}`, 20 * 2 ** 20));
  const bodies = files.map((file) => Buffer.from(file.text));
  // One warm-up upload of a small file, so the first measured one does not pay for compilation.
  await post(baseUrl, token, Buffer.from(syntheticRollout('bench-warmup', 2 ** 20).text));

  const before = (await engram.call('resetPeak')) as number;
  const timings: UploadTiming[] = [];
  for (const body of bodies) timings.push(await post(baseUrl, token, body));
  const unchanged = await post(baseUrl, token, bodies[0]);
  const grownFile = syntheticRollout(`bench-session-grown-${Date.now()}`, 20 * 2 ** 20);
  await post(baseUrl, token, Buffer.from(grownFile.text));
  const grown = await post(baseUrl, token, Buffer.from(grownFile.text + syntheticRollout('x', 0, 3).text.split('\n').slice(2).join('\n')));
  const peak20 = ((await engram.call('memory')) as { peak: number }).peak;

  await engram.call('resetPeak');
  const big = await post(baseUrl, token, Buffer.from(syntheticRollout(`bench-session-60-${Date.now()}`, 60 * 2 ** 20).text));
  const peak60 = ((await engram.call('memory')) as { peak: number }).peak;

  const summary = summarise(timings.map((t) => t.ms));
  return {
    fresh_20mb: { n: summary.n, p50_ms: summary.p50, max_ms: summary.max, statuses: timings.map((t) => t.status), turns: files[0].turns },
    unchanged_20mb: unchanged,
    grown_20mb: grown,
    upload_60mb: big,
    rss_before: before,
    rss_peak_20mb: peak20,
    rss_peak_60mb: peak60,
  };
}
