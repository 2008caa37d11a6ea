/**
 * Text that Engram frames in tags of its own (the blocks it injects into a conversation,
 * the parts of an extraction or tagging request) is data: a stored reflection, a turn or a
 * tool result that happens to hold one of those tags must not close the frame early, nor
 * open another one (DESIGN section 5). One escaping rule serves every frame, so what one
 * frame guards against, all do.
 *
 * "Holds a tag" is read as a model would read it, not as an XML parser would:
 * `< / TRANSCRIPT >`, `</trans\u200Bcript>`, fullwidth forms (`＜／ｔｕｒｎ＞`), look-alike
 * brackets and slashes (`〈∕turn〉`, `‹transcript›`) and a NUL between the letters all count.
 * Precisely: after NFKC folding, without whitespace, control and format characters, and
 * lowercased, the text never holds `<name` or `</name` for a framed name (a look-alike read
 * as `<` or `/`). Only the `<` changes, so the rest (code, HTML, markers) reads as written.
 */

/**
 * `<`, the characters that fold to it (the fullwidth and small less-than signs), and those a
 * model reads as one: angle brackets and quotation marks that look like it (`〈 〈 ⟨ ‹ ❬ ❮ ˂ ᐸ ⧼`).
 */
const LESS_THAN = /[<\uFF1C\uFE64\u2329\u3008\u27E8\u2039\u276C\u276E\u02C2\u1438\u29FC]/g;
/** `/` (once folded) and the slashes a model reads as one: fraction, division and big solidus. */
const SLASHES = new Set(['/', '\u2044', '\u2215', '\u29F8']);
/** What a reader skips between a tag's `<` and its name, or between the name's letters. */
const IGNORABLE = /^[\s\p{Cc}\p{Cf}]$/u;

/**
 * A function that turns every `<` (or a character folding to it) that opens or closes a
 * tag whose name starts with one of `names`, in the sense above, into `&lt;`. Everything
 * else is left as it is; a text without such a tag is returned unchanged (same string).
 * Linear in the text: each `<` is followed only until its name can no longer match.
 */
export function tagNeutraliser(names: readonly string[]): (text: string) => string {
  const wanted = names.map((name) => name.toLowerCase());
  return (text) => {
    let out = '';
    let copied = 0;
    for (const match of text.matchAll(LESS_THAN)) {
      const at = match.index;
      if (!opensTag(text, at + 1, wanted)) continue;
      out += `${text.slice(copied, at)}&lt;`;
      copied = at + 1;
    }
    return copied === 0 ? text : out + text.slice(copied);
  };
}

/** Whether `text` from `from` on reads, to a model, as an optional `/` and then one of `names`. */
function opensTag(text: string, from: number, names: readonly string[]): boolean {
  let seen = '';
  let slash = false;
  for (let i = from; i < text.length; ) {
    const point = text.codePointAt(i)!;
    const char = String.fromCodePoint(point);
    i += char.length;
    if (IGNORABLE.test(char)) continue;
    const folded = point < 0x80 ? char.toLowerCase() : char.normalize('NFKC').toLowerCase();
    if (seen === '' && !slash && SLASHES.has(folded)) {
      slash = true;
      continue;
    }
    seen += folded.replace(/[\s\p{Cc}\p{Cf}]/gu, '');
    if (names.some((name) => seen.startsWith(name))) return true;
    if (!names.some((name) => name.startsWith(seen))) return false;
  }
  return false;
}

/** Characters that end a line for some reader: newlines, CR, U+2028/U+2029, NEL, and the other controls. */
const LINE_BREAKS = /[\s\p{Cc}]+/gu;
/** `[` (or a character folding to it) before a reflection id's `ref_`. */
const ID_OPEN = /[[\uFE47\uFF3B](?=[\s\p{Cf}]*ref_)/giu;

/**
 * `text` as the data of one line in a block of `[id] (kind) content` lines (the existing
 * reflections of an extraction call, the reflections of a tagging call): put on one line,
 * every run of whitespace and control characters (CR, LF, U+2028, U+2029, NEL, NUL) made
 * one space, so it cannot start a line of its own; the block's frames neutralised by
 * `neutralise` (a `tagNeutraliser`); and a `[ref_` written `&#91;ref_`, so it cannot pass
 * for another reflection's id either.
 */
export function dataLine(text: string, neutralise: (text: string) => string): string {
  return neutralise(text.replace(LINE_BREAKS, ' ').trim()).replace(ID_OPEN, '&#91;');
}
