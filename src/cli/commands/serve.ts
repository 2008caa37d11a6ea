import { loadConfig, SETTING_NAMES, type Config, type Overrides } from '../../config.js';
import type { Command, OptionsConfig, OptionValues } from '../command.js';
import { CliError } from '../errors.js';

/** Every setting as a flag (`--port`, `--data-dir`, ...): `engram serve`'s, and the commands that open the stores. */
export const SETTING_OPTIONS: OptionsConfig = Object.fromEntries(SETTING_NAMES.map((name) => [name, { type: 'string' }]));

/** The config, with the setting flags given over the environment and the config file. */
export function configOf(values: OptionValues): Config {
  const overrides: Overrides = {};
  for (const name of SETTING_NAMES) {
    const value = values[name];
    if (typeof value === 'string') overrides[name as keyof Overrides] = value;
  }
  return loadConfig(overrides);
}

/** Gives a stuck handle (a client that never hangs up) this long after close() before exiting anyway. */
const EXIT_GRACE_MS = 2_000;
/**
 * What closing may take beyond the shutdown grace (stopping the workers, closing the
 * stores) before the process exits regardless. An extraction call still running then is
 * abandoned: its job stays leased to this process, and the next start on the data dir
 * delivers it again at once (other replicas: after the ack wait).
 */
const STOP_AFTER_GRACE_MS = 10_000;
/**
 * A signal repeated within this long is the same request to stop, not "again, at once": a
 * terminal's Ctrl-C reaches `npm start` and Engram both, and npm passes its copy on a few
 * milliseconds later.
 */
const SAME_SIGNAL_MS = 1_000;
/** How often a server run by npm looks whether its parent is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Resolves with what asked the server to stop. Set up before the server says it listens:
 * whoever waits for that line may signal at once, and a signal with no listener yet would
 * end the process without the graceful stop. One listener for the whole run, for the same
 * reason: between a `once` and the next listener, a signal would meet none.
 */
function stopRequested(parent: number): Promise<string> {
  let first: number | undefined;
  return new Promise<string>((resolve) => {
    const onSignal = (received: string) => {
      if (first === undefined) {
        first = Date.now();
        resolve(received);
      } else if (Date.now() - first >= SAME_SIGNAL_MS) {
        process.exit(130);
      }
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    watchParent(parent, (gone) => onSignal(`npm's shell (pid ${gone}) is gone`));
  });
}

/**
 * Run by npm (`npx engram serve`, or an `npm run` script without `exec`), Engram is the child
 * of npm's `sh -c`. npm passes a SIGTERM or SIGINT on to that shell, which dies of it without
 * passing it on: Engram would keep running, and its port, with no parent. So a server npm
 * started stops when its parent is gone, as on a SIGTERM. Not otherwise: `nohup`, `setsid`
 * and a shell's `&` leave a server running on purpose once its parent ends.
 */
function watchParent(parent: number, onGone: (parent: number) => void): void {
  if (process.env.npm_command === undefined) return;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone(parent);
  }, PARENT_CHECK_MS);
  timer.unref();
}

/** A port that cannot be listened on, said as what to do about it (no stack trace); undefined for other failures. */
function listenFailure(error: unknown, host: string, port: number, portSource: string): CliError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') {
    return new CliError(`Port ${port} on ${host} is already in use (another Engram, or another program): choose another with --port N or ENGRAM_PORT=N`);
  }
  if (code === 'EACCES') {
    return new CliError(`Not allowed to listen on port ${port} on ${host} (ports below 1024 need privileges): choose another with --port N or ENGRAM_PORT=N`);
  }
  if (code === 'ERR_SOCKET_BAD_PORT') {
    return new CliError(`${portSource} must be a port number (0-65535), got ${port}`, 2);
  }
  if (code === 'EADDRNOTAVAIL') {
    return new CliError(`Cannot listen on ${host}: no network interface has that address; choose another with --host or ENGRAM_HOST`);
  }
  return undefined;
}

export const serveCommand: Command = {
  path: ['serve'],
  synopsis: SETTING_NAMES.map((name) => `[--${name} VALUE]`).join(' '),
  summary: 'Run the Engram server (each flag overrides its ENGRAM_* variable)',
  options: SETTING_OPTIONS,
  async run({ values, io }) {
    const config = configOf(values);

    // Before starting: should npm's shell be gone by the time the server listens, it stops at once.
    const parent = process.ppid;
    // Loaded lazily so the client commands never load the server stack (SQLite, NATS, ...).
    const { start } = await import('../../main.js');
    const server = await start(config).catch((error: unknown) => {
      throw listenFailure(error, config.host, config.port, typeof values.port === 'string' ? '--port' : 'ENGRAM_PORT') ?? error;
    });
    const stopping = stopRequested(parent);
    // DESIGN section 4: a generated admin token's location is printed, never the token.
    const admin = server.adminToken;
    if (admin.created) io.err(`Generated an admin token into ${admin.file} (mode 0600); the CLI reads it from there.`);
    else if (admin.file) io.err(`Admin token: ${admin.file}`);
    else io.err('Admin token: from ENGRAM_ADMIN_TOKEN / --admin-token');
    if (config.configFile) io.err(`Settings from ${config.configFile} (flags and ENGRAM_* variables override it)`);
    // Last, so whoever waits for this line has everything above it.
    const { bus, control, reflections } = server.engines;
    io.err(`Stores: control ${control}, event bus ${bus}, reflections ${reflections}; role ${config.role}`);
    const site = server.deps.publicUrl();
    if (config.role !== 'worker') {
      io.err(config.signup ? `Dashboard: ${site}/ (sign up at ${site}/signup)` : `Dashboard: ${site}/ (sign-up is off: ENGRAM_SIGNUP=false)`);
    }
    io.err(`Engram listening on ${server.url} (data dir ${config.dataDir})`);

    const reason = await stopping;
    io.err(
      `${reason}: shutting down: no new requests; those in flight have ${config.shutdownGraceMs / 1000} s to finish (a second SIGINT or SIGTERM stops it at once)`,
    );
    setTimeout(() => {
      io.err('Shutdown is taking too long: exiting without waiting for the rest');
      process.exit(1);
    }, config.shutdownGraceMs + STOP_AFTER_GRACE_MS).unref();
    await server.close();
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  },
};
