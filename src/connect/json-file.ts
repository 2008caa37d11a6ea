/**
 * Edits to a JSON (or JSON with comments) file that keep the rest of it as the user
 * wrote it: jsonc-parser's `modify` changes only the spans it must, so comments,
 * key order and indentation survive.
 */
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { isDeepStrictEqual } from 'node:util';
import type { Edit, KeyPath } from './types.js';

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } };

export class FileFormatError extends Error {
  override name = 'FileFormatError';
}

/** The parsed document; an empty file counts as `{}`. */
export function parseJson(text: string, file: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    const first = errors[0];
    throw new FileFormatError(`${file} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); fix or move it, then run again`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new FileFormatError(`${file} does not hold a JSON object; fix or move it, then run again`);
  }
  return value as Record<string, unknown>;
}

export function valueAt(document: unknown, path: KeyPath): unknown {
  let node: any = document;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[key];
  }
  return node;
}

/** One replaced value, for telling the user what `--write` changed. */
export interface Change {
  path: KeyPath;
  before: unknown;
  after: unknown;
}

/** Applies `edits` to `text`; returns the new text and the values it replaced. */
export function applyJsonEdits(text: string, edits: Edit[], file: string): { text: string; changes: Change[] } {
  let current = text.trim() === '' ? '{}\n' : text;
  const changes: Change[] = [];
  for (const edit of edits) {
    const document = parseJson(current, file);
    const existing = valueAt(document, edit.path);
    if (edit.kind === 'set') {
      if (isDeepStrictEqual(existing, edit.value)) continue;
      if (existing !== undefined) changes.push({ path: edit.path, before: existing, after: edit.value });
      current = applyEdits(current, modify(current, edit.path, edit.value, FORMAT));
      continue;
    }
    if (!Array.isArray(existing)) {
      if (existing !== undefined) changes.push({ path: edit.path, before: existing, after: [edit.value] });
      current = applyEdits(current, modify(current, edit.path, [edit.value], FORMAT));
      continue;
    }
    const owned = existing.flatMap((element, index) => (edit.owns(element) ? [index] : []));
    if (owned.length === 1 && isDeepStrictEqual(existing[owned[0]], edit.value)) continue;
    // Remove our old entries from the end backwards so the indexes stay right, then add one.
    for (const index of [...owned].reverse()) {
      changes.push({ path: [...edit.path, index], before: existing[index], after: owned.length === 1 ? edit.value : undefined });
      current = applyEdits(current, modify(current, [...edit.path, index], undefined, FORMAT));
    }
    const length = existing.length - owned.length;
    const at = owned.length > 0 ? Math.min(owned[0], length) : length;
    current = applyEdits(current, modify(current, [...edit.path, at], edit.value, { ...FORMAT, isArrayInsertion: true }));
  }
  if (!current.endsWith('\n')) current += '\n';
  return { text: current, changes };
}
