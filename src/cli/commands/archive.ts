/**
 * `engram export` and `engram import`: the archive of a deployment (src/archive/), read
 * from and written to the stores the settings select, the same settings as `engram serve`
 * (so `ENGRAM_NATS_URL=... ENGRAM_WEAVIATE_URL=... engram import FILE` fills a distributed
 * deployment from an embedded one's export). They open the stores directly: a running
 * server may keep serving meanwhile.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { flag, positional, stringOption, type Command } from '../command.js';
import { CliError } from '../errors.js';
import { printResult } from '../output.js';
import { configOf, SETTING_OPTIONS } from './serve.js';

export const archiveCommands: Command[] = [
  {
    path: ['export'],
    synopsis: '[--out FILE] [--json] [serve settings: --data-dir, --nats-url, --weaviate-url, ...]',
    summary: 'Write orgs, agents (keys sealed), token hashes, reflections with vectors, users (password hashes sealed) and OAuth clients to a JSONL archive',
    options: { ...SETTING_OPTIONS, out: { type: 'string' }, json: { type: 'boolean' } },
    async run(context) {
      const config = configOf(context.values);
      const out = stringOption(context, 'out');
      const { connect } = await import('../../main.js');
      const { exportArchive } = await import('../../archive/export-archive.js');
      const connected = await connect(config, { lock: false });
      const file = out === undefined ? undefined : fs.createWriteStream(out, { mode: 0o600 });
      try {
        const write = (line: string) =>
          file ? new Promise<void>((resolve, reject) => file.write(line + '\n', (error) => (error ? reject(error) : resolve()))) : context.io.out(line);
        const { control, reflections, accounts, vault } = connected.deps;
        const counts = await exportArchive({ control, reflections, accounts: accounts.store, vault, engines: connected.engines }, write);
        if (file) await new Promise<void>((resolve, reject) => file.end((error?: Error | null) => (error ? reject(error) : resolve())));
        const summary =
          `Exported ${counts.orgs} organisations, ${counts.agents} agents, ${counts.tokens} tokens, ${counts.reflections} reflections, ` +
          `${counts.users} users, ${counts.clients} OAuth clients`;
        if (flag(context, 'json')) context.io.err(JSON.stringify(counts));
        else {
          context.io.err(
            out ? `${summary} to ${out} (mode 0600). Upstream keys and password hashes are sealed: an import needs this deployment's secret key.` : summary,
          );
        }
      } finally {
        file?.destroy();
        await connected.close();
      }
    },
  },
  {
    path: ['import'],
    synopsis: 'FILE [--json] [serve settings: --data-dir, --nats-url, --weaviate-url, --secret-key, ...]',
    summary: 'Read an archive from `engram export` into the stores the settings select (idempotent)',
    positionals: 1,
    options: { ...SETTING_OPTIONS, json: { type: 'boolean' } },
    async run(context) {
      const file = positional(context, 0, 'FILE');
      const config = configOf(context.values);
      if (!fs.existsSync(file)) throw new CliError(`No such file: ${file}`);
      const { connect } = await import('../../main.js');
      const { importArchive, ArchiveError } = await import('../../archive/import-archive.js');
      const connected = await connect(config, { lock: false });
      try {
        const lines = () => readline.createInterface({ input: fs.createReadStream(file), crlfDelay: Infinity });
        const { control, reflections, accounts, vault } = connected.deps;
        const result = await importArchive({ control, reflections, accounts: accounts.store, vault }, lines).catch((error) => {
          if (error instanceof ArchiveError) throw new CliError(`${file}: ${error.message}`);
          throw error;
        });
        printResult(context, result, () => {
          const { imported: i, skipped: s } = result;
          context.io.out(
            `Imported ${i.orgs} organisations, ${i.agents} agents, ${i.tokens} tokens, ${i.reflections} reflections, ${i.users} users, ${i.clients} OAuth clients ` +
              `(already present: ${s.orgs} organisations, ${s.agents} agents, ${s.tokens} tokens, ${s.users} users, ${s.clients} OAuth clients) ` +
              `into control ${connected.engines.control}, reflections ${connected.engines.reflections}.`,
          );
        });
      } finally {
        await connected.close();
      }
    },
  },
];
