/**
 * The documentation (README.md and docs/*.md) and the CLI agree: every setting is in the
 * settings table of docs/configuration.md, no page names an `ENGRAM_*` variable that
 * Engram does not read, every `engram …` command a page shows is one the CLI has, and
 * the conversation ids the pages show have the forms Engram makes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SETTING_NAMES } from '../../src/config.js';
import { COMMANDS } from '../../src/cli/run.js';
import { answeredConversationId, idDigest, partitionedConversationId, sessionConversationId } from '../../src/control/conversation-id.js';
import { PAGES, pageText } from '../support/docs.js';

const variable = (setting: string) => 'ENGRAM_' + setting.toUpperCase().replaceAll('-', '_');
/** Read by the clients and scripts Engram sets up, or by its tests and evaluation: not server settings. */
const CLIENT_VARIABLES = new Set(['ENGRAM_TOKEN', 'ENGRAM_URL', 'ENGRAM_AGENT_URL', 'ENGRAM_TEST_WEAVIATE_URL', 'ENGRAM_EVAL_LOCOMO']);
/** The page that holds THE settings table, under its `## Settings` heading. */
const SETTINGS_PAGE = 'docs/configuration.md';

/** The settings table's rows, with `ENGRAM_X_URL` / `_MODEL` / `_KEY` expanded. */
function tableVariables(): Set<string> {
  const text = pageText(SETTINGS_PAGE);
  const start = text.indexOf('\n## Settings\n');
  assert.ok(start >= 0, `${SETTINGS_PAGE} has a "## Settings" section`);
  const section = text.slice(start);
  const end = section.indexOf('\n## ', 1);
  const table = end < 0 ? section : section.slice(0, end);
  const found = new Set<string>();
  for (const line of table.split('\n').filter((row) => row.startsWith('| `ENGRAM_'))) {
    const names = [...line.split('|')[1].matchAll(/`(ENGRAM_[A-Z_]+|_[A-Z_]+)`/g)].map((match) => match[1]);
    const [first] = names;
    const stem = first.slice(0, first.lastIndexOf('_'));
    for (const name of names) found.add(name.startsWith('_') ? stem + name : name);
  }
  return found;
}

test('every setting has a row in the settings table of docs/configuration.md, and every row is a setting', () => {
  const rows = tableVariables();
  const settings = new Set(SETTING_NAMES.map(variable));
  assert.equal(SETTING_NAMES.map(variable).filter((name) => !rows.has(name)), [], 'settings without a row');
  assert.equal([...rows].filter((name) => !settings.has(name)), [], 'rows that are not settings');
});

test('every ENGRAM_* variable the README and the docs name is a setting or a client’s', () => {
  const known = new Set([...SETTING_NAMES.map(variable), ...CLIENT_VARIABLES]);
  const unknown: string[] = [];
  for (const page of PAGES) {
    const named = new Set([...page.text.matchAll(/\bENGRAM_[A-Z][A-Z_]*[A-Z]\b/g)].map((match) => match[0]));
    for (const name of named) if (!known.has(name)) unknown.push(`${page.name}: ${name}`);
  }
  assert.equal(unknown, []);
});

test('every engram command the README and the docs show exists, with the flags they show', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    // A command line in a code block, or inline code that starts with the command.
    for (const match of page.text.matchAll(/(?:^\s*|`|\$ )(?:npx )?engram ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?([^\n`]*)/gm)) {
      const [, first, second] = match;
      // Quoted arguments (a reflection's text) are not flags.
      const rest = match[3].replace(/"[^"]*"|'[^']*'/g, '');
      checked++;
      const candidates = COMMANDS.filter((command) => command.path[0] === first && (command.path.length === 1 || command.path[1] === second));
      if (candidates.length === 0) {
        // Prose such as "engram serve prints" is fine; a command group without its verb is not.
        if (!COMMANDS.some((command) => command.path[0] === first)) problems.push(`${page.name}: engram ${first}${second ? ` ${second}` : ''}`);
        continue;
      }
      const command = candidates.sort((a, b) => b.path.length - a.path.length)[0];
      const flags = [...rest.matchAll(/(?:^|\s)--([a-z][a-z-]*)/g)].map((flag) => flag[1]);
      const known = new Set([...Object.keys(command.options ?? {}), 'help', 'url', 'admin-token', 'data-dir', 'host', 'port', 'json']);
      for (const flag of flags) if (!known.has(flag)) problems.push(`${page.name}: engram ${command.path.join(' ')} --${flag}`);
    }
  }
  assert.equal(problems, []);
  assert.ok(checked > 40, `${checked} command lines checked`);
});

/** A digest in an id: `idDigest`'s 32 base64url characters (src/control/conversation-id.ts). */
const D = '[A-Za-z0-9_-]{32}';
/**
 * Whole conversation ids as Engram makes them: `h:` opening and answer, `s:` session,
 * opening and answer, `x:` the header's digest, `t:<format>:<session>` a transcript; an
 * end user's (`u:`) or a named project's (`p:`) digest before any of them.
 */
const CONVERSATION_ID = new RegExp(`^(?:[up]:${D}:)*(?:h:${D}:${D}|s:${D}:${D}:${D}|x:${D}|t:[a-z-]+:[^\\s:]+)$`);

test('the conversation ids the docs show are whole ids of the forms Engram makes (conversation/identity.ts, transcript ingestion)', () => {
  const shown: string[] = [];
  for (const { text } of PAGES) {
    for (const pattern of [
      /--conversation (\S+)/g, // engram reflections list|purge, engram requests
      /conversation_id=([^\s"&]+)/g, // GET …/requests?conversation_id=
      /"conversation_id": "([^"]*)"/g, // the request log's JSON
      /^(?:queued|running|failed|dead)\s+\d+\s+conversation\s+(\S+)/gm, // engram jobs
      /^(?:learnt from )?conversation (\S+)$/gm, // engram reflections show, engram requests show
    ]) {
      for (const match of text.matchAll(pattern)) shown.push(match[1]);
    }
  }
  assert.ok(shown.length >= 6, `the docs show conversation ids (${shown.length} found)`);
  assert.equal(shown.filter((id) => !CONVERSATION_ID.test(id)), []);
});

test('the conversation id pattern this test holds the docs to is the one Engram makes', () => {
  const answer = { role: 'assistant' as const, text: 'It is in scripts/ship.sh.' };
  const opened = answeredConversationId(`h:${idDigest('system and first message')}`, answer);
  const session = answeredConversationId(sessionConversationId('7f3c2a9e-5b1d', idDigest('opening')), answer);
  for (const id of [opened, session, partitionedConversationId(opened, { user: 'alice', scope: 'alpha-shop' }), `x:${idDigest('my-id')}`]) {
    assert.ok(CONVERSATION_ID.test(id), id);
  }
  assert.not.ok(CONVERSATION_ID.test('h:6sK0…:Qb1r…'), 'an id cut short is not a whole id');
  assert.not.ok(CONVERSATION_ID.test('cnv_first'), 'cnv_ ids do not exist');
});

test.run();
