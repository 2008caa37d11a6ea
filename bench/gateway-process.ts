/**
 * The gateway reference (issue 22): the open-source Portkey gateway (`@portkey-ai/gateway`,
 * a dev dependency) run as its own Node process in front of the scripted upstream, as a
 * user would run it instead of Engram: `node build/start-server.js --port=N --headless`.
 * It does none of Engram's memory work; it parses each request, maps it to the provider's
 * shape (OpenAI here, so nearly as is), forwards it to the custom host, and re-reads the
 * answer for its request log. Engram's added time and capacity are reported as ratios to it.
 *
 * Each request names the provider and the upstream in headers (`x-portkey-provider: openai`,
 * `x-portkey-custom-host: <upstream>/v1`, the gateway appends `/chat/completions`) and carries
 * the client's own Authorization header, which the gateway forwards. Only the OpenAI chat
 * completions path is measured through it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import type { Target } from './load.js';

export interface Gateway {
  target: Target;
  /** The gateway's version, from its package.json. */
  version: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

const require = createRequire(import.meta.url);

/** The gateway's start script and version, or undefined when the package is not installed. */
export function gatewayPackage(): { script: string; version: string } | undefined {
  try {
    const manifest = require.resolve('@portkey-ai/gateway/package.json');
    const { version } = require(manifest) as { version: string };
    return { script: path.join(path.dirname(manifest), 'build', 'start-server.js'), version };
  } catch {
    return undefined;
  }
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Polls `GET /` (the gateway's "AI Gateway says hey!") until it answers. */
async function ready(origin: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the Portkey gateway exited during start-up (${child.exitCode ?? child.signalCode})`);
    try {
      const answer = await fetch(origin + '/');
      await answer.arrayBuffer();
      if (answer.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the Portkey gateway did not answer within ${timeoutMs} ms`);
}

/**
 * Starts the gateway in front of `upstreamUrl`, or returns undefined (with the reason
 * logged by the caller) when the package is not installed. Its own logs are silenced:
 * it writes a banner and one line per failed request to stdout and stderr.
 */
export async function startGateway(upstreamUrl: string, options: { startTimeoutMs?: number } = {}): Promise<Gateway | undefined> {
  const found = gatewayPackage();
  if (!found) return undefined;
  const port = await freePort();
  const child = spawn(process.execPath, [found.script, `--port=${port}`, '--headless'], {
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The bench going away must not leave the gateway running.
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  const origin = `http://127.0.0.1:${port}`;
  try {
    await ready(origin, child, options.startTimeoutMs ?? 30_000);
  } catch (error) {
    kill();
    throw error;
  }
  return {
    version: found.version,
    process: child,
    target: {
      name: 'gateway',
      origin,
      prefix: '',
      token: 'sk-bench-direct-0000000000000000',
      headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${upstreamUrl}/v1` },
    },
    async stop() {
      process.off('exit', kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(kill, 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
