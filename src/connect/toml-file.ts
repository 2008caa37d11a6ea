/**
 * `set` edits to a TOML file (Codex's config.toml). smol-toml parses and stringifies but
 * drops comments, so the edit is made on the text instead: our tables are replaced or
 * appended, our top-level keys replaced or put first. The result is parsed and compared
 * with the intended document; only if that fails (a layout the text edit does not
 * understand, such as dotted keys) is the whole file re-rendered, and the caller is told
 * that comments were lost.
 */
import { parse, stringify } from 'smol-toml';
import { isDeepStrictEqual } from 'node:util';
import { FileFormatError, valueAt, type Change } from './json-file.js';
import type { Edit } from './types.js';

type Table = Record<string, unknown>;

function isTable(value: unknown): value is Table {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

export function parseToml(text: string, file: string): Table {
  try {
    return parse(text) as Table;
  } catch (error) {
    throw new FileFormatError(`${file} is not valid TOML (${(error as Error).message.split('\n')[0]}); fix or move it, then run again`);
  }
}

/** smol-toml's tables have null prototypes; compare documents by their content only. */
function sameDocument(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
}

function nest(path: string[], value: unknown): Table {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value) as Table;
}

function setIn(document: Table, path: string[], value: unknown): void {
  let node = document;
  for (const key of path.slice(0, -1)) {
    if (!isTable(node[key])) node[key] = {};
    node = node[key] as Table;
  }
  node[path[path.length - 1]] = structuredClone(value);
}

const HEADER = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$/;

function headerName(line: string): string | undefined {
  const match = HEADER.exec(line);
  return match ? match[1].replace(/\s*\.\s*/g, '.') : undefined;
}

/** Replaces (or appends) the table at `path`, subtables included. */
function spliceTable(lines: string[], path: string[], value: Table): string[] {
  const name = path.map(tomlKey).join('.');
  const block = stringify(nest(path, value)).trimEnd().split('\n');
  const start = lines.findIndex((line) => headerName(line) === name);
  if (start === -1) {
    while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
    return lines.length === 0 ? [...block, ''] : [...lines, '', ...block, ''];
  }
  let end = start + 1;
  while (end < lines.length) {
    const header = headerName(lines[end]);
    if (header !== undefined && header !== name && !header.startsWith(name + '.')) break;
    end++;
  }
  // Keep the blank line that separated the old table from the next one.
  const tail = end < lines.length ? [''] : [];
  return [...lines.slice(0, start), ...block, ...tail, ...lines.slice(end)];
}

/** Replaces (or puts first) a top-level key. */
function spliceRootKey(lines: string[], key: string, value: unknown): string[] {
  const rootEnd = lines.findIndex((line) => headerName(line) !== undefined);
  const limit = rootEnd === -1 ? lines.length : rootEnd;
  const rendered = stringify({ [key]: value }).trimEnd();
  const pattern = new RegExp(`^\\s*(${key}|"${key}")\\s*=`);
  const at = lines.slice(0, limit).findIndex((line) => pattern.test(line));
  if (at !== -1) return [...lines.slice(0, at), rendered, ...lines.slice(at + 1)];
  return [rendered, ...(lines.length > 0 && lines[0].trim() !== '' && limit === 0 ? [''] : []), ...lines];
}

export interface TomlResult {
  text: string;
  changes: Change[];
  /** The text edit did not work out and the file was re-rendered without its comments. */
  commentsDropped: boolean;
}

export function applyTomlEdits(text: string, edits: Edit[], file: string): TomlResult {
  const original = parseToml(text, file);
  const expected = structuredClone(original);
  const changes: Change[] = [];
  let lines = text === '' ? [] : text.replace(/\r\n/g, '\n').replace(/\n$/, '').split('\n');
  let textEditable = true;
  for (const edit of edits) {
    if (edit.kind !== 'set') throw new Error('TOML files take only `set` edits');
    const before = valueAt(expected, edit.path);
    if (before !== undefined && sameDocument(before, edit.value)) continue;
    if (before !== undefined) changes.push({ path: edit.path, before, after: edit.value });
    setIn(expected, edit.path, edit.value);
    if (isTable(edit.value)) lines = spliceTable(lines, edit.path, edit.value);
    else if (edit.path.length === 1) lines = spliceRootKey(lines, edit.path[0], edit.value);
    else textEditable = false;
  }
  if (changes.length === 0 && sameDocument(expected, original)) return { text, changes, commentsDropped: false };
  let result = lines.join('\n') + '\n';
  let commentsDropped = false;
  let spliced: Table | undefined;
  try {
    spliced = textEditable ? (parse(result) as Table) : undefined;
  } catch {
    spliced = undefined;
  }
  if (spliced === undefined || !sameDocument(spliced, expected)) {
    result = stringify(expected);
    commentsDropped = /#/.test(text);
  }
  return { text: result, changes, commentsDropped };
}

/** The TOML a set of edits amounts to on its own: what `connect` prints without `--write`. */
export function tomlFragment(edits: Edit[]): string {
  return applyTomlEdits('', edits, '(fragment)').text;
}
