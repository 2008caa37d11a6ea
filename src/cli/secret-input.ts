/**
 * Secrets the CLI is given (an upstream key, an agent token) without putting them on the
 * command line: a flag's value lands in the shell history, in `ps` output, and under `npx`
 * in npm's debug log. Each secret option `--NAME` comes with `--NAME-env VAR`,
 * `--NAME-file PATH` and `--NAME-stdin`; the plain flag still works, with a warning.
 */
import fs from 'node:fs';
import { stringOption, flag, type CommandContext, type OptionsConfig } from './command.js';
import { UsageError } from './errors.js';

/** `--NAME`, `--NAME-env`, `--NAME-file`, `--NAME-stdin`: the parser options of one secret. */
export function secretOptions(name: string): OptionsConfig {
  return {
    [name]: { type: 'string' },
    [`${name}-env`]: { type: 'string' },
    [`${name}-file`]: { type: 'string' },
    [`${name}-stdin`]: { type: 'boolean' },
  };
}

/** The usage text of one secret's forms. */
export function secretSynopsis(name: string, placeholder: string): string {
  return `--${name}-env VAR | --${name}-file PATH | --${name}-stdin | --${name} ${placeholder}`;
}

/** The options of the secret's forms that were given. */
function givenForms(context: CommandContext, name: string): string[] {
  return [name, `${name}-env`, `${name}-file`, `${name}-stdin`].filter((option) =>
    option.endsWith('-stdin') ? flag(context, option) : stringOption(context, option) !== undefined,
  );
}

/** True when any form of the secret was given. */
export function secretGiven(context: CommandContext, name: string): boolean {
  return givenForms(context, name).length > 0;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A secret read from a file or a pipe ends at its first line: the trailing newline of `echo` or an editor is not part of it. */
function firstLine(text: string): string {
  return text.replace(/^\uFEFF/, '').split(/\r?\n/)[0].trim();
}

/**
 * The secret `--NAME` from whichever one form was given, else undefined. Two forms at
 * once are a usage error; an empty or missing source is one too, so a typo in a variable
 * name never becomes an agent without a key.
 */
export async function readSecret(context: CommandContext, name: string): Promise<string | undefined> {
  const given = givenForms(context, name);
  if (given.length > 1) throw new UsageError(`Give the ${name} one way only, not ${given.map((option) => `--${option}`).join(' and ')}`);
  const plain = stringOption(context, name);
  if (plain !== undefined) {
    if (plain !== '')
      context.io.err(
        `warning: --${name} puts the secret on the command line, where the shell history, \`ps\` and npm's debug log keep it; ` +
          `prefer --${name}-env VAR, --${name}-file PATH or --${name}-stdin`,
      );
    return plain;
  }
  const variable = stringOption(context, `${name}-env`);
  if (variable !== undefined) {
    // The user names the variable on the command line: an input of this one command, not
    // Engram's configuration (which config.ts alone reads).
    const value = process.env[variable];
    if (value === undefined || value.trim() === '') throw new UsageError(`--${name}-env ${variable}: that environment variable is not set or is empty`);
    return value.trim();
  }
  const file = stringOption(context, `${name}-file`);
  if (file !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--${name}-file ${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
    }
    const value = firstLine(text);
    if (value === '') throw new UsageError(`--${name}-file ${file}: the file is empty`);
    return value;
  }
  if (flag(context, `${name}-stdin`)) {
    if (process.stdin.isTTY) context.io.err(`Paste the ${name}, then press Enter and Ctrl-D:`);
    const value = firstLine(await readStdin());
    if (value === '') throw new UsageError(`--${name}-stdin: nothing was read from standard input`);
    return value;
  }
  return undefined;
}
