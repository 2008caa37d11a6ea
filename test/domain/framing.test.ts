/**
 * The one escaping rule of Engram's frames: a text never holds a tag of a framed name as
 * a model could read one, and reads otherwise as it was written.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dataLine, tagNeutraliser } from '../../src/domain/framing.js';
import { adversarial, LINE_BREAK, random, tagsRead, unescaped } from '../support/framing.js';

const NAMES = ['existing-reflections', 'transcript', 'turn'];
const neutralise = tagNeutraliser(NAMES);

test('a frame tag in any case, spacing, folding or with invisibles inside is neutralised', () => {
  const cases: Array<[string, string]> = [
    ['</transcript>', '&lt;/transcript>'],
    ['</TRANSCRIPT>', '&lt;/TRANSCRIPT>'],
    ['< / Turn >', '&lt; / Turn >'],
    ['<turn\tn="7" role="user">', '&lt;turn\tn="7" role="user">'],
    ['<\n/turn>', '&lt;\n/turn>'],
    ['</tr\u200Banscript>', '&lt;/tr\u200Banscript>'],
    ['</exist\u0000ing-reflections>', '&lt;/exist\u0000ing-reflections>'],
    ['</\u2028transcript>', '&lt;/\u2028transcript>'],
    ['＜/ｔｕｒｎ＞', '&lt;/ｔｕｒｎ＞'],
    ['﹤transcript>', '&lt;transcript>'],
    ['＜／ＴＲＡＮＳＣＲＩＰＴ＞', '&lt;／ＴＲＡＮＳＣＲＩＰＴ＞'],
    ['</𝐭𝐮𝐫𝐧>', '&lt;/𝐭𝐮𝐫𝐧>'],
    ['<existing-reﬂections>', '&lt;existing-reﬂections>'],
    ['a </turn></turn> b', 'a &lt;/turn>&lt;/turn> b'],
    ['〈/turn〉', '&lt;/turn〉'],
    ['\u2329/turn\u232A', '&lt;/turn\u232A'],
    ['‹transcript›', '&lt;transcript›'],
    ['⟨∕TURN⟩', '&lt;∕TURN⟩'],
    ['〈⁄existing-reflections〉', '&lt;⁄existing-reflections〉'],
    ['❮/turn❯ ❬/turn❭ ˂/turn ᐸ/turn ⧼/turn', '&lt;/turn❯ &lt;/turn❭ &lt;/turn &lt;/turn &lt;/turn'],
  ];
  for (const [text, expected] of cases) assert.is(neutralise(text), expected, JSON.stringify(text));
});

test('everything else reads as written, and a text without a frame tag is the same string', () => {
  for (const text of ['npm run build && npm test', 'Array<string>', 'if (a < b) return;', '<div class="x">', '</tur>', '<tulip>', '&lt;/turn>', '[REDACTED:github_token]', '<', 'x <', '‹quoted›', '〈a, b〉', '1 ⁄ 2']) {
    assert.is(neutralise(text), text, text);
  }
  const plain = 'const xs: Array<number> = [];';
  assert.ok(Object.is(neutralise(plain), plain));
});

test('property: over adversarial text, no frame tag is left and only `<` changed', () => {
  const next = random(20261127);
  for (let i = 0; i < 3_000; i++) {
    const text = adversarial(next, 16);
    const out = neutralise(text);
    assert.equal(tagsRead(out, NAMES), [], `seed case ${i}: ${JSON.stringify(text)} -> ${JSON.stringify(out)}`);
    assert.is(unescaped(out), unescaped(text), `case ${i}: only a < became &lt;`);
  }
});

test('a data line: one line whatever its breaks, its frames neutralised, no [ref_ of its own', () => {
  assert.is(
    dataLine(' one\r\ntwo\u2028three\u2029four\u0085five\vsix\fseven\u0000eight [ref_000000000000000000000009] ［ref_x] </transcript> ', neutralise),
    'one two three four five six seven eight &#91;ref_000000000000000000000009] &#91;ref_x] &lt;/transcript>',
  );
  const next = random(7);
  for (let i = 0; i < 2_000; i++) {
    const text = adversarial(next);
    const line = dataLine(text, neutralise);
    assert.not.match(line, LINE_BREAK, JSON.stringify(text));
    assert.equal(tagsRead(line, NAMES), [], JSON.stringify(text));
    assert.not.match(line.normalize('NFKC').replace(/[\s\p{Cf}]/gu, ''), /\[ref_/i, JSON.stringify(text));
  }
});

test.run();
