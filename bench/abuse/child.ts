/**
 * What the abuse benches share: `engram serve` as a child process on a fresh data dir, its
 * resident set from /proc (Linux only), and the units they print.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const ADMIN = `egm_admin_${randomBytes(32).toString('base64url')}`;
export const root = path.resolve(import.meta.dirname, '../..');

export const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
export const ms = (value: number) => `${value.toFixed(0)} ms`;
export const sleep = (delay: number) => new Promise<void>((resolve) => setTimeout(resolve, delay));

/** A process's resident set, from /proc/<pid>/status. */
export function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

export interface EngramChild {
  url: string;
  pid: number;
  /** Whether the process is still running. */
  alive(): boolean;
  stop(): Promise<void>;
}

/**
 * `engram serve` on a random port with the admin token above; resolves once it listens.
 * `flags`: more `serve` flags; `source`: another checkout of Engram to run (a before-and-after).
 */
export async function startEngram(options: { flags?: string[]; source?: string } = {}): Promise<EngramChild> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-abuse-'));
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', '--data-dir', dataDir, '--admin-token', ADMIN, '--log-level', 'error', ...(options.flags ?? [])],
    { cwd: options.source ?? root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`engram serve did not start:\n${text}`)), 60_000);
    child.stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /Engram listening on (\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => reject(new Error(`engram serve exited with ${code}:\n${text}`)));
  });
  return {
    url,
    pid: child.pid!,
    alive: () => child.exitCode === null && child.signalCode === null,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
