/**
 * Each transcript normaliser on the records its client writes: what becomes a turn, what
 * is the client's own context or bookkeeping, and that a record never changes a turn
 * read before it (the watermark counts turns across uploads of a growing file).
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { collectTranscript } from '../../src/transcripts/collect.js';
import { CLIENTS } from '../../src/clients/index.js';

type TranscriptFormatId = 'codex' | 'claude-code' | 'copilot';
import { fixture } from '../support/transcripts.js';

const test = suite('transcript normalisers');

async function turns(format: TranscriptFormatId, records: unknown[] | Buffer) {
  const body = Buffer.isBuffer(records) ? records : Buffer.from(records.map((record) => JSON.stringify(record)).join('\n') + '\n');
  const collected = await collectTranscript((async function* () { yield body; })(), CLIENTS.find((client) => client.id === format)!.transcript!, { maxBytes: 1 << 26, turnChars: 1 << 20, windowChars: 1 << 24 });
  return { ...collected, list: collected.window.map((turn) => `${turn.role}: ${turn.text}`) };
}

const EXPECTED = [
  'user: Remember: the release checklist lives in docs/RELEASE.md',
  'assistant: Noted: the release checklist lives in docs/RELEASE.md.',
  'user: What is the first step of the release checklist?',
];

test('every recorded file gives the conversation and only it', async () => {
  for (const [format, file, call] of [
    ['codex', 'codex/rollout-current.jsonl', 'exec_command {"cmd":"cat docs/RELEASE.md"}'],
    ['codex', 'codex/rollout-old.jsonl', 'shell {"command":["bash","-lc","cat docs/RELEASE.md"]}'],
    ['claude-code', 'claude-code/session.jsonl', 'Bash {"command":"cat docs/RELEASE.md","description":"Show the release checklist"}'],
    ['copilot', 'copilot/events.jsonl', 'bash {"command":"cat docs/RELEASE.md","description":"Show the release checklist"}'],
  ] as Array<[TranscriptFormatId, string, string]>) {
    const { list, meta } = await turns(format, fixture(file));
    assert.equal(list.slice(0, 3), EXPECTED, file);
    assert.is(list[3], `assistant: [tool call ${call}]`, file);
    assert.match(list[4], /^tool: [^]*# Release checklist\n1\. Run `npm run build` before `npm test`/, file);
    assert.match(list[5], /^assistant: First step: run `npm run build` before `npm test`/, file);
    assert.is(list.length, 6, file);
    assert.ok(meta.sessionId, file);
  }
});

test('a grown file starts with the same turns (the fingerprint of the shorter one matches)', async () => {
  for (const [format, name] of [
    ['codex', 'codex/rollout-current'],
    ['codex', 'codex/rollout-old'],
    ['claude-code', 'claude-code/session'],
    ['copilot', 'copilot/events'],
  ] as Array<[TranscriptFormatId, string]>) {
    const first = await turns(format, fixture(`${name}.turn1.jsonl`));
    const grown = await turns(format, fixture(`${name}.jsonl`));
    assert.is(first.turnCount, 2, name);
    assert.is(grown.fingerprint(first.turnCount), first.fingerprint(first.turnCount), name);
    assert.is.not(grown.fingerprint(grown.turnCount), first.fingerprint(first.turnCount), name);
  }
});

test('Codex: injected user parts are left out, by provenance or by their opening; compaction is not history', async () => {
  const { list } = await turns('codex', [
    { timestamp: 't', type: 'session_meta', payload: { id: 'sess-1', cwd: '/w' } },
    { timestamp: 't', type: 'turn_context', payload: { model: 'gpt-5.1' } },
    { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] } },
    {
      timestamp: 't',
      type: 'response_item',
      payload: {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Engram says: the index' },
          { type: 'input_text', text: 'Typed by the user' },
        ],
        internal_chat_message_metadata_passthrough: { content_item_metadata: [{ provenance: { type: 'harness', hook: true } }, { provenance: { type: 'user' } }] },
      },
    },
    { timestamp: 't', type: 'response_item', payload: { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context>\n<cwd>/w</cwd>' }, { type: 'input_text', text: 'Older rollouts: typed' }] } },
    { timestamp: 't', type: 'response_item', payload: { type: 'reasoning', summary: [{ type: 'summary_text', text: 'secret thoughts' }], encrypted_content: 'gAAAA' } },
    { timestamp: 't', type: 'event_msg', payload: { type: 'user_message', message: 'Typed by the user' } },
    { timestamp: 't', type: 'compacted', payload: { message: 'summary', replacement_history: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Typed by the user' }] }] } },
    { timestamp: 't', type: 'response_item', payload: { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' } },
    { timestamp: 't', type: 'response_item', payload: { type: 'custom_tool_call_output', output: 'Done!' } },
  ]);
  assert.equal(list, ['user: Typed by the user', 'user: Older rollouts: typed', 'assistant: [tool call apply_patch *** Begin Patch]', 'tool: Done!']);
});

test('Codex old format: a failed shell call keeps its exit code', async () => {
  const { list, meta } = await turns('codex', [
    { id: 'old-1', timestamp: '2025-08-01T00:00:00Z', instructions: null },
    { record_type: 'state' },
    { type: 'function_call_output', call_id: 'c', output: JSON.stringify({ output: 'npm ERR! missing script: build', metadata: { exit_code: 1, duration_seconds: 0.2 } }) },
  ]);
  assert.is(meta.sessionId, 'old-1');
  assert.equal(list, ['tool: npm ERR! missing script: build\n[exit code 1]']);
});

test('Claude Code: side chains, meta lines, slash commands, compaction summaries and thinking are not conversation', async () => {
  const line = (extra: object) => ({ sessionId: 'cc-1', uuid: 'u', parentUuid: null, ...extra });
  const { list, meta } = await turns('claude-code', [
    line({ type: 'user', message: { role: 'user', content: 'Fix the login bug' } }),
    line({ type: 'user', isMeta: true, message: { role: 'user', content: 'Caveat: the messages below were generated by the user while running local commands.' } }),
    line({ type: 'user', message: { role: 'user', content: '<command-name>/clear</command-name>' } }),
    line({ type: 'user', isSidechain: true, message: { role: 'user', content: 'Sub-agent prompt' } }),
    line({ type: 'user', isCompactSummary: true, message: { role: 'user', content: 'This session is being continued from a previous conversation…' } }),
    line({ type: 'assistant', message: { role: 'assistant', model: 'claude-sonnet-4-6', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }] } }),
    line({ type: 'assistant', message: { role: 'assistant', model: '<synthetic>', content: [{ type: 'text', text: 'Looking.' }] } }),
    line({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'FAIL auth.test.ts' }], is_error: true }] } }),
    line({ type: 'attachment', attachment: { type: 'instructions', files: [{ content: 'CLAUDE.md text' }] } }),
    { type: 'summary', summary: 'Login fix', leafUuid: 'u' },
  ]);
  assert.equal(list, ['user: Fix the login bug', 'assistant: Looking.', 'tool: FAIL auth.test.ts']);
  assert.is(meta.sessionId, 'cc-1');
  assert.is(meta.model, 'claude-sonnet-4-6', 'a synthetic message is not a model');
});

test('Copilot: a failed tool is marked, the model follows model changes', async () => {
  const { list, meta } = await turns('copilot', [
    { type: 'session.start', data: { sessionId: 'cp-1', selectedModel: 'gpt-4.1' }, id: '1' },
    { type: 'session.model_change', data: { newModel: 'claude-sonnet-4.5' }, id: '2' },
    { type: 'system.message', data: { role: 'system', content: 'You are the GitHub Copilot CLI.\n<custom_instruction>Use pnpm, not npm.</custom_instruction>' }, id: '2a' },
    { type: 'system.message', data: { role: 'system', content: 'You are the GitHub Copilot CLI.\n<custom_instruction>Use pnpm, not npm.</custom_instruction>' }, id: '2b' },
    { type: 'tool.execution_complete', data: { toolCallId: 'x', success: false, result: { content: 'permission denied: /etc/hosts' } }, id: '3' },
    { type: 'tool.execution_complete', data: { toolCallId: 'y', success: false, error: { message: 'Command timed out' } }, id: '4' },
  ]);
  assert.equal(list, ['tool: permission denied: /etc/hosts\n[failed]', 'tool: Command timed out\n[failed]']);
  assert.is(meta.sessionId, 'cp-1');
  assert.is(meta.model, 'claude-sonnet-4.5');
  assert.equal(meta.instructions, ['You are the GitHub Copilot CLI.\n<custom_instruction>Use pnpm, not npm.</custom_instruction>'], 'its system prompt, once: the session’s instructions, not a turn');
});

test('a file of another format is recognised as such', async () => {
  assert.is((await turns('codex', fixture('copilot/events.jsonl'))).meta.recognised, 0);
  assert.is((await turns('copilot', fixture('claude-code/session.jsonl'))).meta.recognised, 0);
  assert.is((await turns('claude-code', fixture('codex/rollout-current.jsonl'))).meta.recognised, 0);
});

test.run();
