/**
 * The README and the CLI agree: every setting is in the README's settings table (and the
 * README names no `ENGRAM_*` variable that Engram does not read), and every `engram …`
 * command the README shows is one the CLI has.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SETTING_NAMES } from '../../src/config.js';
import { COMMANDS } from '../../src/cli/run.js';
import { ROOT } from '../support/cli.js';

const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const variable = (setting: string) => 'ENGRAM_' + setting.toUpperCase().replaceAll('-', '_');
/** Read by the clients and scripts Engram sets up, or by its tests and evaluation: not server settings. */
const CLIENT_VARIABLES = new Set(['ENGRAM_TOKEN', 'ENGRAM_URL', 'ENGRAM_AGENT_URL', 'ENGRAM_TEST_WEAVIATE_URL', 'ENGRAM_EVAL_LOCOMO']);

/** The settings table's rows, with `ENGRAM_X_URL` / `_MODEL` / `_KEY` expanded. */
function tableVariables(): Set<string> {
  const section = readme.slice(readme.indexOf('\n## Settings'));
  const table = section.slice(0, section.indexOf('\n## ', 1));
  const found = new Set<string>();
  for (const line of table.split('\n').filter((row) => row.startsWith('| `ENGRAM_'))) {
    const names = [...line.split('|')[1].matchAll(/`(ENGRAM_[A-Z_]+|_[A-Z_]+)`/g)].map((match) => match[1]);
    const [first] = names;
    const stem = first.slice(0, first.lastIndexOf('_'));
    for (const name of names) found.add(name.startsWith('_') ? stem + name : name);
  }
  return found;
}

test('every setting has a row in the README’s settings table', () => {
  const rows = tableVariables();
  const missing = SETTING_NAMES.map(variable).filter((name) => !rows.has(name));
  assert.equal(missing, []);
});

test('every ENGRAM_* variable the README names is a setting or a client’s', () => {
  const known = new Set([...SETTING_NAMES.map(variable), ...CLIENT_VARIABLES]);
  const named = new Set([...readme.matchAll(/\bENGRAM_[A-Z][A-Z_]*[A-Z]\b/g)].map((match) => match[0]));
  assert.equal([...named].filter((name) => !known.has(name)), []);
});

test('every engram command the README shows exists, with the flags it shows', () => {
  const problems: string[] = [];
  let checked = 0;
  // A command line in a code block, or inline code that starts with the command.
  for (const match of readme.matchAll(/(?:^\s*|`|\$ )(?:npx )?engram ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?([^\n`]*)/gm)) {
    const [, first, second] = match;
    // Quoted arguments (a reflection's text) are not flags.
    const rest = match[3].replace(/"[^"]*"|'[^']*'/g, '');
    checked++;
    const candidates = COMMANDS.filter((command) => command.path[0] === first && (command.path.length === 1 || command.path[1] === second));
    if (candidates.length === 0) {
      // Prose such as "engram serve prints" is fine; a command group without its verb is not.
      if (!COMMANDS.some((command) => command.path[0] === first)) problems.push(`engram ${first}${second ? ` ${second}` : ''}`);
      continue;
    }
    const command = candidates.sort((a, b) => b.path.length - a.path.length)[0];
    const flags = [...rest.matchAll(/(?:^|\s)--([a-z][a-z-]*)/g)].map((flag) => flag[1]);
    const known = new Set([...Object.keys(command.options ?? {}), 'help', 'url', 'admin-token', 'data-dir', 'host', 'port', 'json']);
    for (const flag of flags) if (!known.has(flag)) problems.push(`engram ${command.path.join(' ')} --${flag}`);
  }
  assert.equal(problems, []);
  assert.ok(checked > 40, `${checked} command lines checked`);
});

test('the conversation ids the README shows have the forms Engram makes (conversation/identity.ts, transcript ingestion)', () => {
  const shown = [...readme.matchAll(/--conversation (\S+)/g)].map((match) => match[1]);
  const jobRows = [...readme.matchAll(/^queued\s+\d+\s+conversation\s+(\S+)/gm)].map((match) => match[1]);
  assert.ok(shown.length >= 2 && jobRows.length >= 1, 'the README shows conversation ids');
  // h: the opening's digest; s: a client session; x: the x-engram-conversation header; t: a transcript.
  assert.equal([...shown, ...jobRows].filter((id) => !/^(?:h|s|x|t):/.test(id)), []);
});

test.run();
