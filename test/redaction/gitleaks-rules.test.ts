/**
 * Every rule of the pinned gitleaks configuration against its own examples: the true and
 * false positives gitleaks validates the rule with in its sources, read into
 * `test/fixtures/secrets/gitleaks-examples.json` by `test/support/gitleaks-examples.ts`.
 * A true positive is found by the rule and, through the redaction Engram runs before
 * extraction and storage, leaves no secret the rule found in the text; a false positive
 * is not found by the rule.
 */
import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileGitleaks, gitleaksFindings } from '../../src/redaction/gitleaks.js';
import { goRegExp } from '../../src/redaction/go-regex.js';
import { redactSecrets } from '../../src/redaction/redact.js';
import { EXAMPLES_FILE, TOML_FILE, tomlSha256, type ExamplesFile } from '../support/gitleaks-examples.js';

const GITLEAKS = compileGitleaks(fs.readFileSync(TOML_FILE, 'utf8'));

const examples = JSON.parse(fs.readFileSync(EXAMPLES_FILE, 'utf8')) as ExamplesFile;

test('the examples belong to the pinned gitleaks.toml (regenerate them after an update)', () => {
  assert.is(examples.toml_sha256, tomlSha256());
  const ids = [...GITLEAKS.rules.map((rule) => rule.id), ...GITLEAKS.skipped.map((rule) => rule.id)].sort();
  assert.equal(Object.keys(examples.rules).sort(), ids);
});

test('every rule that runs has at least one true positive', () => {
  assert.equal(
    GITLEAKS.rules.filter((rule) => examples.rules[rule.id].tps.length === 0).map((rule) => rule.id),
    [],
  );
});

for (const rule of GITLEAKS.rules) {
  const { tps, fps } = examples.rules[rule.id];
  test(`${rule.id}: its true positives are redacted, its false positives are not found`, () => {
    for (const { text } of tps) {
      const found = gitleaksFindings(text, GITLEAKS, [rule]);
      assert.ok(found.length > 0, `${rule.id} misses ${JSON.stringify(text)}`);
      const redacted = redactSecrets(text);
      for (const f of found) {
        const secret = text.slice(f.start, f.end);
        assert.not.ok(redacted.includes(secret), `${rule.id}: ${JSON.stringify(secret)} stays in ${JSON.stringify(redacted)}`);
      }
    }
    const onlyIn = rule.onlyIn === undefined ? undefined : goRegExp(rule.onlyIn);
    for (const { text, path } of fps) {
      // A false positive only because of its file name (`unrelated.js` for a Terraform
      // rule) cannot be one here: a transcript has no file names, so the rule runs everywhere.
      if (onlyIn && path !== undefined && !onlyIn.test(path)) continue;
      assert.equal(gitleaksFindings(text, GITLEAKS, [rule]), [], `${rule.id} finds ${JSON.stringify(text)}`);
    }
  });
}

test.run();
