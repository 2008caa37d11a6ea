import { ConfigError, loadConfig, SETTING_NAMES, type Overrides } from '../../config.js';
import type { Command, OptionsConfig } from '../command.js';
import { CliError } from '../errors.js';

const SERVE_OPTIONS: OptionsConfig = Object.fromEntries(SETTING_NAMES.map((name) => [name, { type: 'string' }]));

/** Gives a stuck handle (a client that never hangs up) this long after close() before exiting anyway. */
const EXIT_GRACE_MS = 2_000;

export const serveCommand: Command = {
  path: ['serve'],
  synopsis: SETTING_NAMES.map((name) => `[--${name} VALUE]`).join(' '),
  summary: 'Run the Engram server (each flag overrides its ENGRAM_* variable)',
  options: SERVE_OPTIONS,
  async run({ values, io }) {
    const overrides: Overrides = {};
    for (const name of SETTING_NAMES) {
      const value = values[name];
      if (typeof value === 'string') overrides[name as keyof Overrides] = value;
    }
    let config;
    try {
      config = loadConfig(overrides);
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message, 2);
      throw error;
    }

    // Loaded lazily so the client commands never load the server stack (SQLite, NATS, ...).
    const { start } = await import('../../main.js');
    const server = await start(config);
    // DESIGN section 4: a generated admin token's location is printed, never the token.
    const admin = server.adminToken;
    if (admin.created) io.err(`Generated an admin token into ${admin.file} (mode 0600); the CLI reads it from there.`);
    else if (admin.file) io.err(`Admin token: ${admin.file}`);
    else io.err('Admin token: from ENGRAM_ADMIN_TOKEN / --admin-token');
    // Last, so whoever waits for this line has everything above it.
    const { bus, control, reflections } = server.engines;
    io.err(`Stores: control ${control}, event bus ${bus}, reflections ${reflections}; role ${config.role}`);
    io.err(`Engram listening on ${server.url} (data dir ${config.dataDir})`);

    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    io.err(`${signal}: shutting down (send it again to stop at once)`);
    process.once(signal, () => process.exit(130));
    await server.close();
    setTimeout(() => process.exit(), EXIT_GRACE_MS).unref();
  },
};
