/**
 * A real nats-server (Debian's 2.9 in CI) for the tests, the way nats.js tests itself:
 * one server per suite, a config with a random port (`-1`) whose chosen port is read
 * from the ports file, JetStream in a temp store dir. `restart()` stops it and starts it
 * again on the same port and store (what an operator's restart looks like to Engram).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const CANDIDATES = [process.env.ENGRAM_TEST_NATS_SERVER, '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

/** The nats-server binary, or undefined when none is installed (`.ci/run` installs Debian's). */
export function natsServerBinary(): string | undefined {
  return CANDIDATES.find((file): file is string => typeof file === 'string' && existsSync(file));
}

export interface NatsServer {
  /** `nats://127.0.0.1:<port>` */
  url: string;
  port: number;
  dir: string;
  /**
   * Stops the server (SIGTERM, then SIGKILL; `kill`: SIGKILL at once, as a crash, so what
   * it had not flushed is lost) and starts it again on the same port and store.
   */
  restart(options?: { downMs?: number; kill?: boolean }): Promise<void>;
  stop(): Promise<void>;
  /** Stops it and removes its store. */
  cleanup(): Promise<void>;
}

/** The client port a ports file names, or undefined while the server is still writing it. */
function readPorts(file: string): number | undefined {
  try {
    const ports = JSON.parse(readFileSync(file, 'utf8')) as { nats?: string[] };
    return ports.nats?.[0] ? Number(new URL(ports.nats[0]).port) : undefined;
  } catch {
    return undefined;
  }
}

export async function startNatsServer(options: { jetstreamMaxPayload?: number } = {}): Promise<NatsServer> {
  const binary = natsServerBinary();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server); .ci/run installs it');
  const dir = mkdtempSync(path.join(tmpdir(), 'engram-nats-'));
  const config = (port: number | -1) =>
    [
      `listen: 127.0.0.1:${port}`,
      `ports_file_dir: ${JSON.stringify(dir)}`,
      `jetstream { store_dir: ${JSON.stringify(path.join(dir, 'js'))} }`,
      ...(options.jetstreamMaxPayload ? [`max_payload: ${options.jetstreamMaxPayload}`] : []),
    ].join('\n');
  let child: ChildProcess | undefined;

  const launch = async (port: number | -1): Promise<number> => {
    const file = path.join(dir, 'nats.conf');
    writeFileSync(file, config(port));
    for (const old of readdirSync(dir)) if (old.endsWith('.ports')) rmSync(path.join(dir, old));
    let log = '';
    const started = spawn(binary, ['-c', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    started.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    started.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    child = started;
    const portsFile = path.join(dir, `nats-server_${started.pid}.ports`);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      if (started.exitCode !== null) throw new Error(`nats-server exited (${started.exitCode}):\n${log}`);
      // The ports file appears once the listener is up; JetStream is ready when the server says so.
      // The server creates the file, then writes it: an empty or partial file is read again.
      const ports = log.includes('Server is ready') && existsSync(portsFile) ? readPorts(portsFile) : undefined;
      if (ports) return ports;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    started.kill('SIGKILL');
    throw new Error(`nats-server did not start within 10 s:\n${log}`);
  };

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };

  const port = await launch(-1);
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    dir,
    async restart({ downMs = 0, kill = false } = {}) {
      await stop(kill ? 'SIGKILL' : 'SIGTERM');
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await launch(port);
    },
    stop: () => stop(),
    async cleanup() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
