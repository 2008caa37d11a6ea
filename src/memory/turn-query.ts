/**
 * The retrieval query of a turn (DESIGN section 6): what is new since the conversation's
 * last turn, not only its newest message. An agent's newest input is more often a tool's
 * output or "continue" than a question; what is worth searching memory for is then in the
 * tool results and calls that came with it: the error a command printed, the command, the
 * file it read. Pure: the adapter says where those are in each protocol.
 *
 * The query, at most `QUERY_CHARS` long (retrieval keeps up to that many characters of a
 * query whole, see `injectionQuery`), one line per part:
 *   1. the user's text, all new user inputs with the newest last, when it says something
 *      (a "continue" or "yes" is left out once the tools give something to search for);
 *   2. error lines of the new tool results, the newest result's first;
 *   3. the commands of the new tool calls, the newest first;
 *   4. the paths they name, then paths in the tool results.
 * Each part is one short line; one already said by an earlier line is left out. The
 * assistant's prose is never searched (it is the model's own words, not the task).
 *
 * Bounded whatever the conversation holds: at most `MAX_MESSAGES` messages are looked at,
 * each tool output through a window of its head and tail, all outputs together through a
 * bounded number of characters, and each line through its first `MATCHED_CHARS`.
 */
import { headAndTail, oneLine, STOPWORDS, tail, truncateEnd, withoutNoiseLines, words } from '../domain/text.js';
import { reflectionIdsIn } from './reflection-id.js';
import { isObject } from '../protocols/shared.js';
import type { MessageKinds, ToolCall } from '../protocols/types.js';
import { stripEngramBlocks } from './engram-blocks.js';
import { cleanLines, isErrorLine } from './tool-output.js';

/** Retrieval's window on a query (its head 300 and tail 700 characters): a query this long is searched whole. */
export const QUERY_CHARS = 1000;
/** Room for the user's text when tool lines follow it: its head and its tail, where a request usually is. */
const USER_HEAD_CHARS = 200;
const USER_TAIL_CHARS = 400;
/** Earlier new user inputs are gathered until this much text is held (the newest always is, whole). */
const USER_GATHER_CHARS = 4000;
/**
 * A user text with fewer distinct content words than this ("continue", "fix it", "go
 * ahead", "yes please") asks nothing of its own; content words are those of three letters
 * or more that are not function words. Two suffice: "why does checkout fail?" asks something.
 */
const SUBSTANTIVE_WORDS = 2;
const CONTENT_WORD_LETTERS = 3;
/** Words are counted in the opening of a text: past it any text has enough of them. */
const COUNTED_CHARS = 2000;

/** The newest messages of the span looked at: a long history rewound says nothing more recent ones do not. */
const MAX_MESSAGES = 40;
/** Each tool output is read through its first and its last this many characters. */
const OUTPUT_WINDOW_CHARS = 8 * 1024;
/** Characters of tool output read over a whole turn. */
const OUTPUT_READ_CHARS = 64 * 1024;
/** How much of a line the path pattern reads (the error patterns bound themselves the same way). */
const MATCHED_CHARS = 512;
/** The longest a query line is. */
const LINE_CHARS = 160;

const ERRORS_PER_RESULT = 4;
const MAX_ERRORS = 8;
const MAX_COMMANDS = 6;
const MAX_CALL_PATHS = 8;
const MAX_OUTPUT_PATHS = 6;

/**
 * Where clients put what a tool call runs and the file it works on: `command` (Claude
 * Code's Bash, Copilot's and opencode's bash, a Responses shell call's argv), `cmd` (Codex's
 * exec_command), `commands` (a Responses shell call's list); `file_path` (Claude Code),
 * `filePath` (opencode), `path`/`paths` (Copilot, Codex, a patch operation), `notebook_path`.
 */
const COMMAND_KEYS = ['command', 'cmd', 'commands'] as const;
const PATH_KEYS = ['file_path', 'filePath', 'path', 'paths', 'notebook_path'] as const;

/** A shell wrapping a command (`bash -lc "npm test"`): the command is what is worth searching. */
const SHELL = /(?:^|\/)(?:ba|z|da|k|fi)?sh$/;

/**
 * A path in text: segments joined by `/` (never a URL's, never inside a longer word), with
 * a letter somewhere, and either a start that makes it one (`/`, `~/`, `./`, `../`), two
 * slashes or more, or a file name with an extension (`src/app.ts`, not `and/or`). Stops
 * before `:line:col` and trailing punctuation.
 */
const PATH = /(?<![\w.@+~/:-])(?:~\/|\/)?(?:[\w.@+-]+\/)+[\w.@+-]+/g;
const PATH_SHAPE = /^(?:~?\/|\.{1,2}\/)|\/.*\/|\.[A-Za-z][\w-]{0,7}$/;

export interface TurnQuery {
  /** The text to search memory for; '' when the new messages hold nothing to search for. */
  text: string;
  /** Reflections the new tool results already show (a `recall` result): not to be injected beside them. */
  shown: string[];
}

/** What the messages `from`..`to` (inclusive) of a conversation give retrieval to search for. */
export function turnQuery(adapter: MessageKinds, messages: readonly unknown[], span: { from: number; to: number }): TurnQuery {
  const typed: string[] = [];
  let typedChars = 0;
  const found: Found = { errors: [], commands: [], callPaths: [], outputPaths: [], shown: new Set() };
  let room = OUTPUT_READ_CHARS;
  for (let i = span.to; i >= Math.max(span.from, span.to - MAX_MESSAGES + 1); i--) {
    const message = messages[i];
    if (adapter.isSystemEntry(message)) continue;
    const result = adapter.isToolResult(message);
    // Text beside tool results is the client's own (Claude Code's "Tool loaded.", its
    // interruption notes), not the user's: only user inputs give the user's text.
    if (!result && typedChars < USER_GATHER_CHARS && adapter.isUserInput(message)) {
      const text = adapter.queryText(message).trim();
      if (text !== '') typed.push(text);
      typedChars += text.length;
    }
    if (result) {
      if (room > 0) room -= readResult(adapter, message, room, found);
    } else {
      for (const call of adapter.toolCalls(message)) readCall(call, found);
    }
  }
  const userText = typed.reverse().join('\n\n');
  const toolLines = [...found.errors, ...found.commands, ...found.callPaths, ...found.outputPaths];
  const shown = [...found.shown];
  if (toolLines.length === 0) return { text: userText, shown };
  return { text: compose(substantive(userText) ? leadOf(userText) : '', toolLines), shown };
}

/** Whether a user text asks something of its own, judged by its distinct content words. */
export function substantive(text: string): boolean {
  const distinct = new Set<string>();
  for (const word of words(text.length > COUNTED_CHARS ? text.slice(0, COUNTED_CHARS) : text)) {
    if (word.length >= CONTENT_WORD_LETTERS && !STOPWORDS.has(word)) distinct.add(word);
    if (distinct.size >= SUBSTANTIVE_WORDS) return true;
  }
  return false;
}

/** What the tool side of a turn gave, each list in the order it is searched. */
interface Found {
  errors: string[];
  commands: string[];
  callPaths: string[];
  outputPaths: string[];
  shown: Set<string>;
}

/** The user's text within its room: noise lines and Engram's blocks out, its head and tail kept. */
function leadOf(text: string): string {
  // The cleaning reads a bounded window, not a whole pasted log.
  const window = text.length > 4 * QUERY_CHARS ? `${text.slice(0, 2 * QUERY_CHARS)}\n${tail(text, 2 * QUERY_CHARS)}` : text;
  const clean = withoutNoiseLines(stripEngramBlocks(window)).trim();
  if (clean.length <= USER_HEAD_CHARS + USER_TAIL_CHARS) return clean;
  const { head, tail: end } = headAndTail(clean, USER_HEAD_CHARS, USER_TAIL_CHARS);
  return `${head}\n${end}`;
}

/** The query: the lead, then each tool line that fits and that no earlier line already says. */
function compose(lead: string, toolLines: string[]): string {
  const lines = lead === '' ? [] : [lead];
  const said = [lead.toLowerCase()];
  let used = lead.length;
  for (const line of toolLines) {
    const key = line.toLowerCase();
    if (used + line.length + 1 > QUERY_CHARS || said.some((earlier) => earlier.includes(key))) continue;
    lines.push(line);
    said.push(key);
    used += line.length + 1;
  }
  return lines.join('\n');
}

/**
 * Reads the tool results of one message, at most `room` characters of them: their error
 * lines and paths, or, for a result showing Engram's own memories, the ids it shows.
 * Returns the characters read.
 */
function readResult(adapter: MessageKinds, message: unknown, room: number, found: Found): number {
  let read = 0;
  const errors: string[] = [];
  const paths: string[] = [];
  let first = '';
  for (const piece of adapter.toolOutputs(message)) {
    if (read >= room) break;
    const { text, chars } = outputWindow(piece, room - read);
    read += chars;
    const ids = reflectionIdsIn(text);
    if (ids.length > 0) {
      // Memories the model already holds (its `recall` found them): neither searched again nor injected beside.
      for (const id of ids) found.shown.add(id);
      continue;
    }
    for (const line of cleanLines(text)) {
      if (line.trim() === '') continue;
      first ||= line;
      if (errors.length < ERRORS_PER_RESULT && isErrorLine(line)) push(errors, clip(line), ERRORS_PER_RESULT);
      if (paths.length < MAX_OUTPUT_PATHS) for (const path of pathsIn(line)) push(paths, path, MAX_OUTPUT_PATHS);
    }
  }
  // A result the protocol marks as failed (Claude Code's `is_error`) without a line that says so: its first line does.
  if (errors.length === 0 && first !== '' && adapter.toolResultFailed(message)) errors.push(clip(first));
  for (const error of errors) push(found.errors, error, MAX_ERRORS);
  for (const path of paths) push(found.outputPaths, path, MAX_OUTPUT_PATHS);
  return read;
}

/** The part of a tool output that is read: all of it when short, else its head and tail in whole lines. */
function outputWindow(text: string, room: number): { text: string; chars: number } {
  const half = Math.min(OUTPUT_WINDOW_CHARS, Math.floor(room / 2));
  if (text.length <= 2 * half) return { text, chars: text.length };
  let head = text.slice(0, half);
  const headEnd = head.lastIndexOf('\n');
  if (headEnd > 0) head = head.slice(0, headEnd);
  let end = tail(text, half);
  const tailStart = end.indexOf('\n');
  if (tailStart >= 0 && tailStart < end.length - 1) end = end.slice(tailStart + 1);
  return { text: `${head}\n${end}`, chars: 2 * half };
}

/** The command a call runs and the paths it names. */
function readCall(call: ToolCall, found: Found): void {
  const input = call.input;
  if (typeof input === 'string') {
    // A free-form tool (a patch) or arguments left unparsed: the paths in its opening lines.
    for (const line of cleanLines(input.slice(0, OUTPUT_WINDOW_CHARS))) for (const path of pathsIn(line)) push(found.callPaths, path, MAX_CALL_PATHS);
    return;
  }
  if (!isObject(input)) return;
  for (const key of COMMAND_KEYS) {
    const value = input[key];
    if (typeof value === 'string') push(found.commands, commandLine(value), MAX_COMMANDS);
    else if (Array.isArray(value) && value.every((part) => typeof part === 'string')) {
      if (key === 'commands') for (const command of value) push(found.commands, commandLine(command), MAX_COMMANDS);
      else push(found.commands, commandLine(argvCommand(value)), MAX_COMMANDS);
    }
  }
  for (const key of PATH_KEYS) {
    const value = input[key];
    for (const path of typeof value === 'string' ? [value] : Array.isArray(value) ? value : []) {
      if (typeof path === 'string' && path.trim() !== '' && path.length <= MATCHED_CHARS) push(found.callPaths, clip(path), MAX_CALL_PATHS);
    }
  }
}

/** An argv as one command line; a shell wrapping the command (`bash -lc "…"`) left out. */
function argvCommand(argv: string[]): string {
  if (argv.length >= 3 && SHELL.test(argv[0]) && /^-\w*c$/.test(argv[1])) return argv.slice(2).join(' ');
  return argv.join(' ');
}

/** A command's first line (a heredoc's body is not the command), on one short line. */
function commandLine(command: string): string {
  const start = command.trimStart();
  const end = start.indexOf('\n');
  return clip(end === -1 ? start.slice(0, MATCHED_CHARS) : start.slice(0, Math.min(end, MATCHED_CHARS)));
}

/** The paths in a line of text (its first `MATCHED_CHARS` read). */
function pathsIn(line: string): string[] {
  const head = line.length > MATCHED_CHARS ? line.slice(0, MATCHED_CHARS) : line;
  if (!head.includes('/')) return [];
  const out: string[] = [];
  for (const match of head.matchAll(PATH)) {
    const path = match[0].replace(/[.-]+$/, '');
    if (/[A-Za-z]/.test(path) && PATH_SHAPE.test(path)) out.push(clip(path));
  }
  return out;
}

const clip = (text: string): string => truncateEnd(oneLine(text), LINE_CHARS);

/** Adds `item` to `list` unless it is there already or the list is full. */
function push(list: string[], item: string, max: number): void {
  if (item !== '' && list.length < max && !list.includes(item)) list.push(item);
}
