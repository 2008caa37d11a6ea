/**
 * `engram <command>`: finds the command, parses its flags with node:util parseArgs, and
 * turns failures into one readable line and an exit code (1 failure, 2 usage).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadCliConfig, type CliOverrides } from '../config.js';
import { StartupError } from '../errors.js';
import { ENGRAM_VERSION } from '../version.js';
import { adminTokenPath, readAdminToken } from '../security/admin-token.js';
import { ApiClient } from './api-client.js';
import type { Command, CommandContext, Io, OptionValues, OptionsConfig } from './command.js';
import { agentCommands } from './commands/agents.js';
import { archiveCommands } from './commands/archive.js';
import { backupCommand } from './commands/backup.js';
import { connectCommand } from './commands/connect.js';
import { deadLetterCommands } from './commands/dead-letters.js';
import { jobsCommand } from './commands/jobs.js';
import { memberCommands } from './commands/members.js';
import { transcriptUploadCommand } from './commands/transcripts.js';
import { orgCommands } from './commands/orgs.js';
import { reflectionCommands } from './commands/reflections.js';
import { requestCommands } from './commands/requests.js';
import { serveCommand } from './commands/serve.js';
import { tokenCommands } from './commands/tokens.js';
import { CliError, UsageError } from './errors.js';

export const COMMANDS: readonly Command[] = [serveCommand, ...orgCommands, ...memberCommands, ...agentCommands, ...tokenCommands, ...reflectionCommands, ...deadLetterCommands, jobsCommand, ...requestCommands, connectCommand, transcriptUploadCommand, ...archiveCommands, backupCommand];

const REMOTE_OPTIONS: OptionsConfig = {
  url: { type: 'string' },
  'admin-token': { type: 'string' },
  'data-dir': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
};

const REMOTE_HELP = `Server and credentials (client commands):
  --url URL             server address (ENGRAM_URL; default http://ENGRAM_HOST:ENGRAM_PORT, 127.0.0.1:8420)
  --admin-token TOKEN   admin token (ENGRAM_ADMIN_TOKEN; default: read <data dir>/admin-token)
  --data-dir DIR        data dir holding admin-token (ENGRAM_DATA_DIR; default ~/.engram)`;

export const processIo: Io = {
  out: (text) => void process.stdout.write(text + '\n'),
  err: (text) => void process.stderr.write(text + '\n'),
};

function commandLine(command: Command): string {
  return `engram ${command.path.join(' ')} ${command.synopsis}`.trimEnd();
}

export function usage(group?: string): string {
  const commands = COMMANDS.filter((command) => group === undefined || command.path[0] === group);
  const lines = commands.map((command) => `  ${command.path.join(' ').padEnd(20)} ${command.summary}`);
  return ['Usage: engram <command> [options]   (engram <command> --help for its options; engram --version)', '', 'Commands:', ...lines, '', REMOTE_HELP].join('\n');
}

function findCommand(argv: string[]): Command | undefined {
  const matches = COMMANDS.filter((command) => command.path.every((word, index) => argv[index] === word));
  return matches.sort((a, b) => b.path.length - a.path.length)[0];
}

function makeClient(values: OptionValues): ApiClient {
  const overrides: CliOverrides = {};
  for (const name of Object.keys(REMOTE_OPTIONS) as (keyof CliOverrides)[]) {
    const value = values[name];
    if (typeof value === 'string') overrides[name] = value;
  }
  const config = loadCliConfig(overrides);
  let token = config.adminToken;
  if (token === undefined) {
    try {
      token = readAdminToken(config.dataDir);
    } catch (error) {
      throw new CliError(`Cannot read ${adminTokenPath(config.dataDir)}: ${(error as Error).message}`);
    }
  }
  if (token === undefined) {
    throw new CliError(
      `No admin token: pass --admin-token or set ENGRAM_ADMIN_TOKEN, or point --data-dir (ENGRAM_DATA_DIR) at the ` +
        `server's data dir (looked for ${adminTokenPath(config.dataDir)}; \`engram serve\` creates it on first start).`,
    );
  }
  return new ApiClient(config.url, token);
}

export async function runCli(argv: string[], io: Io = processIo): Promise<number> {
  try {
    const first = argv[0];
    if (first === '--version' || first === '-V') {
      io.out(ENGRAM_VERSION);
      return 0;
    }
    if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
      const group = first === 'help' ? argv[1] : undefined;
      (first === undefined ? io.err : io.out)(usage(group));
      return first === undefined ? 2 : 0;
    }
    const command = findCommand(argv);
    if (!command) {
      const known = COMMANDS.some((candidate) => candidate.path[0] === first);
      throw new UsageError(known ? `Unknown \`${first}\` command "${argv[1] ?? ''}"\n\n${usage(first)}` : `Unknown command "${first}"\n\n${usage()}`);
    }
    const rest = argv.slice(command.path.length);
    if (rest.includes('--help') || rest.includes('-h')) {
      io.out(`Usage: ${commandLine(command)}\n\n${command.summary}${command.remote ? `\n\n${REMOTE_HELP}` : ''}`);
      return 0;
    }

    let parsed;
    try {
      parsed = parseArgs({
        args: rest,
        options: { ...(command.remote ? REMOTE_OPTIONS : {}), ...command.options },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new UsageError(`${(error as Error).message}\nUsage: ${commandLine(command)}`);
    }
    const extra = parsed.positionals[command.positionals ?? 0];
    if (extra !== undefined) throw new UsageError(`Unexpected argument "${extra}"\nUsage: ${commandLine(command)}`);

    let client: ApiClient | undefined;
    const context: CommandContext = {
      values: parsed.values as OptionValues,
      positionals: parsed.positionals,
      io,
      api: () => (client ??= makeClient(parsed.values as OptionValues)),
    };
    await command.run(context);
    return 0;
  } catch (error) {
    // A known failure in one line (a wrong setting is a usage error); anything else with its stack.
    const exitCode = error instanceof CliError ? error.exitCode : error instanceof ConfigError ? 2 : error instanceof StartupError ? 1 : undefined;
    if (exitCode !== undefined) {
      io.err(`engram: ${(error as Error).message}`);
      return exitCode;
    }
    io.err(`engram: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 1;
  }
}
