/** Plain-text rendering for people; `--json` output is the API's JSON as is. */
import { flag, type CommandContext, type Io } from './command.js';

export function printJson(io: Io, value: unknown): void {
  io.out(JSON.stringify(value, null, 2));
}

/** A command's result: the API's JSON with `--json`, else in words (`inWords`). */
export function printResult<T>(context: CommandContext, value: T, inWords: () => void): void {
  if (flag(context, 'json')) printJson(context.io, value);
  else inWords();
}

/** Left-aligned columns separated by two spaces; an empty list prints `empty`. */
export function printTable(io: Io, headers: string[], rows: (string | number | null | undefined)[][], empty: string): void {
  if (rows.length === 0) {
    io.out(empty);
    return;
  }
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined ? '-' : String(cell))))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  for (const row of cells) {
    io.out(row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]))).join('  ').trimEnd());
  }
}

/** One line of a long text, for tables. */
export function clip(text: string, max = 70): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

/** `2026-11-03T10:04:00.000Z` → `2026-11-03 10:04`. */
export function shortTime(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 16).replace('T', ' ') : '-';
}
