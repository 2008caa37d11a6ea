/** Running the `engram` command as a user does: a real process, its output captured. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The installed entry: it loads tsx itself, so it runs from any working directory. */
export const BIN = path.join(ROOT, 'bin/engram.js');
/**
 * tsx's loader as this project installed it, for `node --import`: a bare `tsx` is
 * resolved from the child's working directory, which a test may put anywhere (a fresh
 * temporary folder finds no tsx, unless one lies around it).
 */
export const TSX_LOADER = import.meta.resolve('tsx');
/** `node` arguments that run Engram's TypeScript CLI entry from any working directory. */
export const CLI_ENTRY = ['--import', TSX_LOADER, path.join(ROOT, 'src/cli/main.ts')];

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * A home of the test process's own, empty: a child that falls back on `~/.engram` (the
 * default data dir, its admin token) finds nothing of the person running the tests.
 */
export const TEST_HOME = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-test-home-'));
process.on('exit', () => fs.rmSync(TEST_HOME, { recursive: true, force: true }));

/**
 * The environment without ENGRAM_* settings, so only the flags of each test apply, and
 * with `HOME` at `TEST_HOME` unless the test gives its own.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('ENGRAM_')));
  return { ...env, HOME: TEST_HOME, ...extra };
}

/** Runs `engram ARGS` to its end (through bin/engram.js with `bin`, else the TypeScript entry). */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; bin?: boolean } = {}): Promise<CliRun> {
  const entry = options.bin ? [BIN] : CLI_ENTRY;
  return runProcess(process.execPath, [...entry, ...args], { cwd: options.cwd ?? ROOT, env: options.env ?? cleanEnv() });
}

/** Runs a program to its end, `stdin` written to it, its output captured. */
export function runProcess(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    // A program may exit before reading its input (a hook without its token): not an error here.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin ?? '');
  });
}

/** `engram serve` (or another command) to its exit; one that starts listening instead is stopped and reported (code null). */
export function serveUntilExitOrListening(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: cleanEnv() });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      if (stderr.includes('Engram listening on')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}
