/**
 * What each adapter reads as the request's instructions (`ProtocolAdapter.instructions`),
 * on what the real clients send (recorded Claude Code and Codex requests, CLIENTS.md):
 * the instruction files first, then system and developer entries, then the system prompt;
 * a reminder that is not an instruction file (a mentioned file, a to-do list) is no
 * instruction.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { messages } from '../../src/protocols/messages/adapter.js';
import { responses } from '../../src/protocols/responses/adapter.js';
import { chatCompletions } from '../../src/protocols/chat-completions/adapter.js';
import { INSTRUCTIONS_TURN } from '../../src/protocols/responses/items.js';
import { instructionFiles } from '../../src/clients/index.js';

/** The instruction files of every client Engram knows. */
const isInstructionFile = instructionFiles();

const fixture = (path: string) => JSON.parse(readFileSync(new URL(`../fixtures/${path}`, import.meta.url), 'utf8')).body;

/** Claude Code's reminder holding CLAUDE.md, in its own words. */
const CLAUDE_MD =
  '<system-reminder>\nAs you answer the user\'s questions, you can use the following context:\n# claudeMd\n' +
  'Codebase and user instructions are shown below. Be sure to adhere to these instructions.\n\n' +
  'Contents of /repo/CLAUDE.md (project instructions, checked into the codebase):\n\n- Always run `npm run lint` before committing.\n</system-reminder>';
/** Codex's user message holding AGENTS.md. */
const AGENTS_MD = '# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\n- Use pnpm, not npm, to add dependencies.\n</INSTRUCTIONS>';

test('Claude Code: CLAUDE.md in a reminder, the mid-conversation system entry, the system prompt; not the other reminders', () => {
  const body = structuredClone(fixture('claude-code/turn-1.json'));
  const first = body.messages[0];
  const mentioned = '<system-reminder>\nCalled the Read tool with the following input: {"file_path":"/repo/src/app.ts"}\nResult of calling the Read tool: export const app = 1;\n</system-reminder>';
  first.content = [{ type: 'text', text: CLAUDE_MD }, { type: 'text', text: mentioned }, ...first.content];
  const texts = messages.instructions(body, isInstructionFile);
  assert.is(texts[0], CLAUDE_MD);
  // A file the user mentioned belongs to this conversation only.
  assert.not.ok(texts.includes(mentioned));
  // The fixture's own reminder on commit attribution, sent in every session and naming CLAUDE.md, is in.
  const attribution = (first.content as Array<{ text: string }>)[2].text;
  assert.ok(attribution.startsWith('<system-reminder>\nAttribution'), attribution);
  assert.is(texts[1], attribution);
  const system = body.messages.find((m: { role: string }) => m.role === 'system');
  assert.ok(texts.includes(system.content[0].text), 'the mid-conversation system entry');
  assert.equal(texts.slice(-body.system.length), body.system.map((block: { text: string }) => block.text), 'the system prompt last');
  // Not what the user typed: the transcript still leaves the reminder out.
  assert.not.ok(messages.transcript(body).some((turn) => turn.text.includes('claudeMd')));
});

test('Codex: AGENTS.md in a user message and the developer messages; its turn stays, as a short note', () => {
  const body = structuredClone(fixture('codex/http-2-question.json'));
  const before = responses.transcript(body, isInstructionFile).length;
  const at = body.input.findIndex((item: { role?: string }) => item.role === 'user');
  body.input.splice(at, 0, { type: 'message', role: 'user', content: [{ type: 'input_text', text: AGENTS_MD }] });
  const texts = responses.instructions(body, isInstructionFile);
  assert.is(texts[0], AGENTS_MD);
  const developer = body.input.filter((item: { role?: string }) => item.role === 'developer');
  assert.equal(texts.slice(1), developer.map((item: { content: Array<{ text: string }> }) => item.content.map((part) => part.text).join('\n')));
  // The environment context is a user message but no instruction file.
  assert.not.ok(texts.some((text) => text.includes('<environment_context>')));
  const turns = responses.transcript(body, isInstructionFile);
  assert.is(turns.length, before + 1, 'one turn more, as before the change: watermarks count alike');
  assert.equal(turns[at - developer.length], { role: 'user', text: INSTRUCTIONS_TURN });
  assert.equal(responses.instructions({ model: 'm', instructions: 'You are terse.', input: 'hi' }, isInstructionFile), ['You are terse.']);
});

test('chat completions: system and developer messages, and an instruction file in a user message', () => {
  const body = {
    model: 'gpt-test',
    messages: [
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'developer', content: [{ type: 'text', text: 'Answer briefly.' }] },
      { role: 'user', content: [{ type: 'text', text: AGENTS_MD }, { type: 'text', text: 'Add lodash.' }] },
    ],
  };
  assert.equal(chatCompletions.instructions(body, isInstructionFile), [AGENTS_MD, 'You are a coding agent.', 'Answer briefly.']);
});

test.run();
