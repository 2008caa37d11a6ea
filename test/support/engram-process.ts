/**
 * Engram as a separate process (`engram serve`), for what only a real process shows: a
 * `kill -9`, several replicas, a restart. Not a test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, eventually } from './engram.js';
import { CLI_ENTRY, cleanEnv } from './cli.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export interface EngramProcess {
  url: string;
  child: ChildProcess;
  /** What it wrote to stderr so far (start-up lines, warnings). */
  stderr(): string;
  /** `kill -9`: no shutdown, no cleanup, as a crash. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts `engram serve` with these ENGRAM_* settings and waits until it listens. `wrap`
 * runs it under another command (`inSmallDisk`): given the command line, returns the one to run.
 */
export async function serveProcess(
  env: Record<string, string>,
  options: { port?: number; wrap?: (command: string[]) => string[] } = {},
): Promise<EngramProcess> {
  const port = options.port ?? (await freePort());
  const url = `http://127.0.0.1:${port}`;
  const [command, ...args] = (options.wrap ?? ((given) => given))([process.execPath, ...CLI_ENTRY, 'serve']);
  const child = spawn(command!, args, {
    cwd: ROOT,
    env: {
      ...cleanEnv(),
      ENGRAM_PORT: String(port),
      ENGRAM_HOST: '127.0.0.1',
      ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN,
      ENGRAM_LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`engram serve exited (${child.exitCode}):\n${stderr}`);
    return stderr.includes('Engram listening on') ? true : undefined;
  }, 30_000, 'engram serve to listen');
  return {
    url,
    child,
    stderr: () => stderr,
    async crash() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A management API call with the admin token. */
export async function adminApi(url: string, method: string, pathname: string, body?: unknown): Promise<any> {
  const response = await fetch(url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return text ? JSON.parse(text) : undefined;
}

/**
 * Runs the command with `dir` on a tmpfs of `size` (e.g. `64m`) of its own: in a new user
 * and mount namespace, so no root is needed. The test reaches that disk through
 * `/proc/<pid>/root<dir>` (`smallDiskPath`) to fill it up and free it again.
 */
export function inSmallDisk(dir: string, size: string): (command: string[]) => string[] {
  return (command) => ['unshare', '-rm', 'sh', '-c', `mount -t tmpfs -o size=${size} tmpfs "$1" && shift && exec "$@"`, 'sh', dir, ...command];
}

/** `dir` as the process started with `inSmallDisk` sees it. */
export function smallDiskPath(child: ChildProcess, dir: string): string {
  return `/proc/${child.pid}/root${dir}`;
}
