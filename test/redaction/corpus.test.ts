/**
 * The redaction corpus (test/fixtures/secrets): every secret shape, generated fresh from
 * a seed, in the five places a coding agent's conversation carries one, must come out
 * without the secret; realistic text without secrets (git, npm, stack traces, JSON logs,
 * diffs, checksums) must come out unchanged; and no input, however hostile, is slow.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { redactSecrets } from '../../src/redaction/redact.js';
import { RULESET, rulesetFindings } from '../../src/redaction/ruleset.js';
import { CONTEXTS, SAMPLES, SHAPES, benignTexts, secretParts } from '../fixtures/secrets/corpus.js';

test('the corpus holds the 21 shapes the probe found missed and at least 63 in all', () => {
  assert.is(SHAPES.filter((shape) => shape.probe).length, 21);
  assert.ok(SHAPES.length >= 63, `${SHAPES.length} shapes`);
  assert.is(new Set(SHAPES.map((shape) => shape.id)).size, SHAPES.length, 'ids are unique');
});

for (const sample of SAMPLES) {
  test(`no ${sample.shape.id} survives: ${sample.shape.shape}`, () => {
    for (const [context, wrap] of Object.entries(CONTEXTS)) {
      const text = wrap(sample.snippet);
      const out = redactSecrets(text);
      for (const part of secretParts(sample.secret)) {
        assert.not.ok(out.includes(part), `${context}: ${JSON.stringify(part)} is still in ${JSON.stringify(out)}`);
      }
      assert.ok(/\[REDACTED:[a-z_]+\]/.test(out), `${context}: a marker names what was removed`);
      assert.is(redactSecrets(out), out, `${context}: redacting again changes nothing`);
    }
  });
}

for (const { name, text } of benignTexts()) {
  test(`leaves realistic text alone: ${name}`, () => {
    const out = redactSecrets(text);
    if (out === text) return;
    const before = text.split('\n');
    const changed = out.split('\n').filter((line, i) => line !== before[i]);
    assert.unreachable(`redacted what is no secret:\n${changed.join('\n')}`);
  });
}

test('JSON-escaped line breaks around a secret come back intact', () => {
  const text = '{"command":"cat .env\\nGITLAB=glpat-Zq8wVu7tSr6QpOn5mLk4\\n\\tok"}';
  assert.is(redactSecrets(text), '{"command":"cat .env\\nGITLAB=[REDACTED:gitlab]\\n\\tok"}');
  // Text that already holds a Unicode line separator is redacted as it is.
  assert.is(redactSecrets('a\u2028 key-0123456789abcdef0123456789abcdef'), 'a\u2028 [REDACTED:mailgun_key]');
});

test('every marker kind is what readers of redacted text match: [a-z_]+', () => {
  const all = SAMPLES.map((sample) => redactSecrets(CONTEXTS.prose(sample.snippet))).join('\n');
  for (const match of all.matchAll(/\[REDACTED:([^\]]*)\]/g)) assert.match(match[1], /^[a-z_]+$/);
});

test('the ruleset runs synchronously: no rule of the preset answers with a promise', () => {
  assert.ok(RULESET.length >= 20, `${RULESET.length} rules loaded`);
  const asyncRules = new Set<string>();
  for (const sample of SAMPLES) rulesetFindings(CONTEXTS.tool_output(sample.snippet), asyncRules);
  assert.equal([...asyncRules], []);
});

test('a bare 64-hex value is a key unless something says it is a hash', () => {
  const key = 'c9d1e8f4a2b7063e5d8c1f9a4b2e7d6c3a8f1e5b9d2c7a4e6f1b8d3c5a9e2f70';
  // `secrets.token_hex(32)` is how such keys are made.
  assert.is(redactSecrets(`$ python3 -c "import secrets; print(secrets.token_hex(32))"\n${key}`), '$ python3 -c "import secrets; print(secrets.token_hex(32))"\n[REDACTED:hex_key]');
  for (const hash of [`Digest: sha256:${key}`, `${key}  dist/app.tgz`, `checksum = "${key}"`, `"device_id":"${key}"`, `"tail":["${key}"]`]) {
    assert.is(redactSecrets(hash), hash);
  }
});

test('values beside credential words: random ones go, words, paths and ids stay', () => {
  const cases: [string, string][] = [
    ['SECRET_KEY_BASE=9f3a7c1e5b8d2f4a6c0e9b7d5f3a1c8e', 'SECRET_KEY_BASE=[REDACTED:secret]'],
    ['"signingKey": "Xk9mQ2vR7tLp4WzB8nC3"', '"signingKey": "[REDACTED:secret]"'],
    ['my api key is Xk9mQ2vR7tLp4WzB8nC3jD, use it', 'my api key is [REDACTED:secret], use it'],
    ['SERVICE_API_KEY=123e4567-e89b-42d3-a456-426614174000', 'SERVICE_API_KEY=[REDACTED:secret]'],
    // gitleaks' heroku-api-key names the provider.
    ['HEROKU_API_KEY=123e4567-e89b-42d3-a456-426614174000', 'HEROKU_API_KEY=[REDACTED:heroku_api_key]'],
  ];
  for (const [input, expected] of cases) assert.is(redactSecrets(input), expected);
  for (const untouched of [
    '"key": "uploads/2024/11/report-final.pdf"',
    'cache key 123e4567-e89b-42d3-a456-426614174000 missed',
    '"token_type": "Bearer", "max_tokens": 1024',
    'primaryKey: createdAtTimestampDescending',
    'gpg: using EDDSA key 7C6BE1184D32C347CE68B4DC32D10B2F77DFE7FD',
    '"publicKey": "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEq8JrxzZQIXGAeb7SZP9z4PF62WFh"',
    'the key combination is CtrlShiftPaletteCommand',
  ]) {
    assert.is(redactSecrets(untouched), untouched);
  }
});

test('passwords told in prose go; prose about passwords stays', () => {
  assert.is(redactSecrets('the admin password is Tr0ub4dor&3, keep it safe'), 'the admin password is [REDACTED:password], keep it safe');
  assert.is(redactSecrets('the password for root was `hunter`'), 'the password for root was `[REDACTED:password]`');
  assert.is(redactSecrets('The password for root: S3cret!pw, then sudo'), 'The password for root: [REDACTED:password], then sudo');
  // Words between the password and its verb; a closing `!` belongs to the value.
  assert.is(
    redactSecrets('the password used by the nightly export job is Horse7…!battery, it expires Friday'),
    'the password used by the nightly export job is [REDACTED:password], it expires Friday',
  );
  assert.is(redactSecrets('password for the staging db is: hunter2Xy!'), 'password for the staging db is: [REDACTED:password]');
  assert.is(redactSecrets('the passphrase of the backup signing key was "blue Cactus 41"'), 'the passphrase of the backup signing key was "[REDACTED:password]"');
  assert.is(redactSecrets('pwd for the ci user on the build box = Zr8#kq2w'), 'pwd for the ci user on the build box = [REDACTED:password]');
  for (const prose of [
    'If the password is wrong three times the account is locked.',
    'The password is stored in the vault and rotated monthly.',
    'the password is stored in Vault',
    'the password is required',
    'password is case-sensitive',
    'const password = req.body.password;',
    'the password used by the nightly export job is rotated every 90 days',
    'The password rotation for all 200 service accounts is 2024-12-01.',
    'The minimum password length for admin users in v2 is 12 characters.',
    'If the password you typed in step 3 is wrong, reset it.',
    'the password hashing library we pinned in package.json is v4.1.2',
    // Nine words between the word and the verb: too far to be one phrase.
    'the password that the team in Berlin set up for the old wiki last year is Wiki2019!',
  ]) {
    assert.is(redactSecrets(prose), prose);
  }
});

test('command lines: the password goes, the command and the user stay', () => {
  assert.is(redactSecrets('mysqldump -uroot -p"S3cr3t!" shop > dump.sql'), 'mysqldump -uroot -p[REDACTED:password] shop > dump.sql');
  assert.is(redactSecrets('curl --user deploy:S3cr3t! https://ci.internal/api'), 'curl --user deploy:[REDACTED:password] https://ci.internal/api');
  assert.is(redactSecrets('curl -u sk_9fQ2mX7vR4tLp8Wz: https://api.example.com'), 'curl -u [REDACTED:secret]: https://api.example.com');
  for (const untouched of ['mysql -u root -p shop', 'mysql -h db -P 3306 -u app', 'docker run -u 1000:1000 node', 'curl -u "$USER:$PASS" https://x']) {
    assert.is(redactSecrets(untouched), untouched);
  }
});

/**
 * Hostile inputs of 1 MB on one line: long runs of what patterns repeat (base64, hex,
 * word characters, dashes), many starts of a pattern that never completes. None of the
 * patterns nests quantifiers over user text, so each takes a few hundred ms at most; the
 * bound is loose for a loaded machine, a quadratic pattern takes minutes.
 */
test('1 MB adversarial lines stay fast', () => {
  const MB = 1024 * 1024;
  const fill = (unit: string) => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const inputs: Record<string, string> = {
    'one letter': fill('a'),
    base64: fill('Ab3+/Zq9'),
    hex: fill('0123456789abcdef'),
    'dash-separated words': fill('xoxb-12-'),
    'SendGrid starts': fill('SG.aaaa.'),
    'PEM headers without a body': fill('-----BEGIN RSA PRIVATE KEY-----'),
    'URL schemes without a host': fill('https://a:'),
    'credential words without values': fill('password token key secret '),
    'assignments without values': fill('api_key=\\"'),
    'prose without a password': fill('the password is '),
    'JSON escapes': fill('\\n\\t\\"'),
    'curl options': fill('curl -u a:'),
    'ruleset prefixes': fill('glpat-hf_npm_dckr_pat_gsk_'),
    // Each of these once took seconds or minutes: a look-ahead run to the end of the line
    // from every `sk-`, a value scanned again from every `Key=` inside it, every finding
    // checked against every marker.
    'key prefixes': fill('sk-'),
    'connection-string keys': fill('AccountKey='),
    'database URLs': fill('mongodb://a:b@'),
    'command lines': fill('mysql -p'),
    flags: fill('--password '),
    // The webhook, PEM-line and vendor-token shapes: many starts, long runs, every line a candidate.
    'webhook URLs without a credential': fill('https://chat.example.com/a/b/c/hooks/'),
    'escaped URL schemes': fill('http:\\/\\/'),
    'Teams paths': fill('https://x.webhook.office.com/webhookb2/'),
    'base64 lines': fill('MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n'),
    'vendor prefixes': fill('acme_live_'),
    'alphanumeric run after a prefix': `acme_${fill('aB3')}`,
    'prose passwords with many words': fill('the password of the job that runs at night is '),
  };
  for (const [name, input] of Object.entries(inputs)) {
    const started = performance.now();
    redactSecrets(input);
    const ms = performance.now() - started;
    assert.ok(ms < 3000, `${name}: ${ms.toFixed(0)} ms for 1 MB`);
  }
});

test.run();
