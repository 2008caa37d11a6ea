import fs from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileGitleaks, escapeView, gitleaksFindings } from '../../src/redaction/gitleaks.js';
import { leadingStrings } from '../../src/redaction/gitleaks-shape.js';
import { parseGoRegex } from '../../src/redaction/go-regex.js';
import { KeywordScan } from '../../src/redaction/keyword-scan.js';
import { TOML_FILE } from '../support/gitleaks-examples.js';

const GITLEAKS = compileGitleaks(fs.readFileSync(TOML_FILE, 'utf8'));

const rule = (id: string) => {
  const found = GITLEAKS.rules.find((r) => r.id === id);
  if (!found) throw new Error(`no rule ${id}`);
  return found;
};

test('every rule of the pinned gitleaks configuration compiles but the one that matches a file name', () => {
  assert.is(GITLEAKS.rules.length, 221);
  assert.equal(GITLEAKS.skipped, [{ id: 'pkcs12-file', reason: 'matches a file name only' }]);
});

test('a curl header is found after a word that ends in curl, and after CURL, on the same line', () => {
  // gitleaks' curl rules start `\bcurl\b`; a start where that fails must not skip the line.
  const secret = 'Xk9mQ2vR7tLp4WzB8nC3jD5f';
  for (const line of [
    `echo xcurl; curl -H "Authorization: Bearer ${secret}" https://api.example.com`,
    `CURL is here: curl -H "Authorization: Bearer ${secret}" https://api.example.com`,
  ]) {
    const found = gitleaksFindings(line, GITLEAKS, [rule('curl-auth-header')]);
    assert.equal(
      found.map((f) => line.slice(f.start, f.end)),
      [secret],
      line,
    );
  }
});

test('a long line of curl commands without a header is scanned in linear time', () => {
  const line = 'curl -u a:'.repeat(100_000);
  const started = performance.now();
  assert.equal(gitleaksFindings(line, GITLEAKS, [rule('curl-auth-header')]), []);
  assert.ok(performance.now() - started < 1500);
});

test('JSON escapes read as what they stand for, at the same length', () => {
  const text = '{\\"token\\":\\"NRAK-X\\"}\\nnext\\\\n';
  const view = escapeView(text);
  assert.is(view.length, text.length);
  assert.is(view, '{ "token ": "NRAK-X "} \nnext\\\\n');
});

test('a pattern with an optional literal starts with each of its spellings, so generic-api-key runs only at its keywords', () => {
  assert.equal(leadingStrings(parseGoRegex('(?:key|passw(?:or)?d)=')), ['key=', 'passwd=', 'password=']);
  assert.equal(leadingStrings(parseGoRegex('[a-z]+=')), undefined);
  assert.ok(rule('generic-api-key').startKeywords !== undefined);
});

test('a stopword anywhere in a secret, in any case, is found in one pass', () => {
  const scan = new KeywordScan(['example', 'abcdef']);
  assert.ok(scan.has('my_EXAMPLE_value'));
  assert.ok(scan.has('xxabcdef'));
  assert.not.ok(scan.has('Xk9mQ2vR7tLp4WzB8nC3'));
  // generic-api-key's own allowlist: a value with a stopword stays, one without goes.
  assert.equal(gitleaksFindings('api_key = "example_9fQ2mX7vR4tLp8W"', GITLEAKS, [rule('generic-api-key')]), []);
  assert.is(gitleaksFindings('api_key = "Zq9fQ2mX7vR4tLp8WkJ3"', GITLEAKS, [rule('generic-api-key')]).length, 1);
});

test.run();
