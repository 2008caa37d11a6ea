import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GITLEAKS_RULES, GITLEAKS_SKIPPED, escapeView, gitleaksFindings } from '../../src/domain/redact-gitleaks.js';

const rule = (id: string) => {
  const found = GITLEAKS_RULES.find((r) => r.id === id);
  if (!found) throw new Error(`no rule ${id}`);
  return found;
};

test('every rule of the pinned gitleaks configuration compiles but the one that matches a file name', () => {
  assert.is(GITLEAKS_RULES.length, 221);
  assert.equal(GITLEAKS_SKIPPED, [{ id: 'pkcs12-file', reason: 'matches a file name only' }]);
});

test('a curl header is found after a word that ends in curl, and after CURL, on the same line', () => {
  // gitleaks' curl rules start `\bcurl\b`; a start where that fails must not skip the line.
  const secret = 'Xk9mQ2vR7tLp4WzB8nC3jD5f';
  for (const line of [
    `echo xcurl; curl -H "Authorization: Bearer ${secret}" https://api.example.com`,
    `CURL is here: curl -H "Authorization: Bearer ${secret}" https://api.example.com`,
  ]) {
    const found = gitleaksFindings(line, [rule('curl-auth-header')]);
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
  assert.equal(gitleaksFindings(line, [rule('curl-auth-header')]), []);
  assert.ok(performance.now() - started < 1500);
});

test('JSON escapes read as what they stand for, at the same length', () => {
  const text = '{\\"token\\":\\"NRAK-X\\"}\\nnext\\\\n';
  const view = escapeView(text);
  assert.is(view.length, text.length);
  assert.is(view, '{ "token ": "NRAK-X "} \nnext\\\\n');
});

test.run();
