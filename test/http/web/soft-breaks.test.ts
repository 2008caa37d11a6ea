/**
 * Where a value may break (`http/web/soft-breaks.ts`): after `/` and `.`, never at a
 * hyphen; escaped; the whole value in the title. The layout test sees it in Chromium.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { softBreaks, valueHtml } from '../../../src/http/web/soft-breaks.js';

test('a host name is cut after its dots into pieces each kept on one line, so its hyphens never break it', () => {
  assert.is(
    softBreaks('behind db-stage-9.internal today'),
    'behind <span class="seg">db-stage-9.</span><wbr><span class="seg">internal</span> today',
  );
});

test('words, and short runs without a dot or slash, are left to wrap as prose', () => {
  assert.is(softBreaks('the release-please workflow'), 'the release-please workflow');
});

test('a path breaks after its slashes; a piece too long for a phone is left free to break', () => {
  const token = 'egm_tu4hcXymd3iMwoSBJs5SjhmkWVaspfTI2Pis4dIHad4';
  assert.is(softBreaks(`docs/${token}`), `<span class="seg">docs/</span><wbr>${token}`);
});

test('a value is escaped, whole in its title, and breaks at its spaces too', () => {
  assert.is(
    valueHtml('a<b "x-y.z"', 'mono'),
    '<span class="value mono" title="a&lt;b &quot;x-y.z&quot;"><span class="seg">a&lt;b</span> <span class="seg">&quot;x-y.</span><wbr><span class="seg">z&quot;</span></span>',
  );
});

test.run();
