/**
 * `engram connect --write`: merge each planned file into what the user has. Every new
 * content is computed before anything is written, so a file that does not parse stops
 * the run with nothing changed. A changed file is backed up first; an unchanged one is
 * not touched (running twice changes nothing and makes no second backup).
 */
import fs from 'node:fs';
import path from 'node:path';
import { applyJsonEdits, type Change } from './json-file.js';
import { applyTomlEdits, tomlFragment } from './toml-file.js';
import type { PlannedFile } from './types.js';

export interface FileOutcome {
  path: string;
  status: 'created' | 'updated' | 'unchanged';
  /** Where the previous content went, when the file existed and changed. */
  backup?: string;
  /** Values of the user's that were replaced. */
  changes: Change[];
  /** The TOML was re-rendered and lost its comments (the backup has them). */
  commentsDropped: boolean;
  mode: number;
}

const SCRIPT_MODE = 0o755;
const SECRET_MODE = 0o600;
const DEFAULT_MODE = 0o644;

interface Merged {
  text: string;
  changes: Change[];
  commentsDropped: boolean;
}

/** The file's content after our edits, from its current content (undefined: no file yet). */
export function mergedContent(file: PlannedFile, existing: string | undefined): Merged {
  if (file.type === 'script') return { text: file.content, changes: [], commentsDropped: false };
  if (file.format === 'toml') return applyTomlEdits(existing ?? '', file.edits, file.path);
  return { ...applyJsonEdits(existing ?? '', file.edits, file.path), commentsDropped: false };
}

/** What the file's entries amount to on their own: the text `connect` prints without --write. */
export function fragment(file: PlannedFile): string {
  if (file.type === 'script') return file.content;
  if (file.format === 'toml') return tomlFragment(file.edits);
  return applyJsonEdits('', file.edits, file.path).text;
}

export function plannedMode(file: PlannedFile): number {
  if (file.type === 'script') return SCRIPT_MODE;
  return file.secret ? SECRET_MODE : DEFAULT_MODE;
}

function readIfExists(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** `config.toml.engram-backup-20261122T024055Z`, never overwriting an earlier backup. */
function backupPath(file: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  let candidate = `${file}.engram-backup-${stamp}`;
  for (let n = 1; fs.existsSync(candidate); n++) candidate = `${file}.engram-backup-${stamp}-${n}`;
  return candidate;
}

/** Write through a temp file and a rename, so a crash never leaves half a config. */
function writeAtomically(file: string, text: string, mode: number): void {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.engram-${process.pid}.tmp`);
  fs.writeFileSync(temp, text, { mode });
  fs.chmodSync(temp, mode);
  fs.renameSync(temp, file);
}

export function writeFiles(files: PlannedFile[], now: Date = new Date()): FileOutcome[] {
  const merged = files.map((file) => {
    const existing = readIfExists(file.path);
    return { file, existing, ...mergedContent(file, existing) };
  });
  return merged.map(({ file, existing, text, changes, commentsDropped }) => {
    const currentMode = existing === undefined ? undefined : fs.statSync(file.path).mode & 0o777;
    // Secrets and scripts get their mode whatever it was; other files keep the user's.
    const mode = file.type === 'script' || (file.type === 'structured' && file.secret) ? plannedMode(file) : (currentMode ?? plannedMode(file));
    if (existing === text) {
      if (currentMode !== mode) fs.chmodSync(file.path, mode);
      return { path: file.path, status: 'unchanged', changes: [], commentsDropped: false, mode };
    }
    fs.mkdirSync(path.dirname(file.path), { recursive: true });
    let backup: string | undefined;
    if (existing !== undefined) {
      backup = backupPath(file.path, now);
      fs.copyFileSync(file.path, backup);
      fs.chmodSync(backup, currentMode ?? DEFAULT_MODE);
    }
    writeAtomically(file.path, text, mode);
    return { path: file.path, status: existing === undefined ? 'created' : 'updated', backup, changes, commentsDropped, mode };
  });
}
