/**
 * `engram backup FILE`: a consistent copy of the embedded database, taken while the
 * server keeps serving, and the secret key beside it. The upstream keys in the database
 * are sealed with that key: a backup without it restores agents that cannot call their
 * upstream. Runs on the machine that holds the data dir (it opens the file itself).
 */
import fs from 'node:fs';
import path from 'node:path';
import { flag, positional, type Command } from '../command.js';
import { CliError } from '../errors.js';
import { printJson } from '../output.js';
import { configOf } from './serve.js';

export const backupCommand: Command = {
  path: ['backup'],
  synopsis: 'FILE [--data-dir DIR] [--json]',
  summary: 'Copy the embedded database (consistent, while serving) to FILE and the secret key to FILE.secret-key',
  positionals: 1,
  options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } },
  async run(context) {
    const target = path.resolve(positional(context, 0, 'FILE'));
    const config = configOf(context.values);
    if (config.natsUrl) {
      throw new CliError(
        'ENGRAM_NATS_URL is set: agents and tokens live in NATS, not in the data dir. Back up with `engram export` ' +
          '(and keep ENGRAM_SECRET_KEY), or NATS JetStream and Weaviate with their own tools.',
      );
    }
    const { DATABASE_FILE } = await import('../../main.js');
    const { backupDatabase, BackupError } = await import('../../adapters/sqlite/backup.js');
    const { loadOrCreateSecretKey, secretKeyPath, SecretKeyMissingError } = await import('../../security/secret-box.js');
    const database = path.join(config.dataDir, DATABASE_FILE);
    if (!fs.existsSync(path.dirname(target))) throw new CliError(`No such directory: ${path.dirname(target)}`);

    // The key is read first: a data dir whose key is unreadable makes no half backup.
    let key: Buffer | undefined;
    if (!config.secretKey) {
      try {
        key = loadOrCreateSecretKey(config.dataDir, undefined, { create: false });
      } catch (error) {
        if (!(error instanceof SecretKeyMissingError)) throw new CliError((error as Error).message);
      }
    }
    const result = await backupDatabase(database, target).catch((error: unknown) => {
      if (error instanceof BackupError) throw new CliError(`${error.message} (is ${config.dataDir} the server's data dir? --data-dir / ENGRAM_DATA_DIR)`);
      throw new CliError(`Backup of ${database} failed: ${(error as Error).message}`);
    });
    const keyFile = `${target}.secret-key`;
    if (key) writePrivate(keyFile, key.toString('hex') + '\n');

    if (flag(context, 'json')) {
      printJson(context.io, { file: result.file, key_file: key ? keyFile : null, bytes: result.bytes, orgs: result.orgs, agents: result.agents, reflections: result.reflections });
    } else {
      context.io.out(`Backed up ${result.orgs} organisations, ${result.agents} agents, ${result.reflections} reflections (${result.bytes} bytes) to ${target} (mode 0600).`);
      if (key) context.io.out(`The secret key is in ${keyFile} (mode 0600): keep the two together, and as safe as the key itself.`);
      context.io.out(
        `Restore into an empty data dir DIR, with no server on it: cp ${target} DIR/${DATABASE_FILE}` +
          (key ? ` && install -m 600 ${keyFile} DIR/secret-key` : '') +
          ', then `engram serve --data-dir DIR`.',
      );
    }
    if (config.secretKey) {
      context.io.err('engram: the secret key comes from ENGRAM_SECRET_KEY and is not in this backup: keep it; the upstream keys in the backup open only with it.');
    } else if (!key && result.agents > 0) {
      context.io.err(`engram: warning: ${secretKeyPath(config.dataDir)} is missing: the upstream keys in this backup cannot be opened without the key they were sealed with.`);
    }
  },
};

/** Written whole with mode 0600, replacing any older file (whose mode would otherwise stay). */
function writePrivate(file: string, text: string): void {
  const partial = `${file}.partial-${process.pid}`;
  fs.writeFileSync(partial, text, { mode: 0o600, flag: 'wx' });
  fs.renameSync(partial, file);
}
