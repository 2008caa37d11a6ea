/**
 * Long paths and URLs inside prose ("infrastructure/kubernetes/overlays/staging/…") have
 * no space to wrap at, and tables must never break a word. So the text is escaped and a
 * `<wbr>` (a line-break opportunity that copying leaves out) goes after each `/`, `.`,
 * `_`, `:` and `=` followed by a letter or digit, inside a run of 20 or more characters
 * without a space: the line breaks where a typesetter would break a URL, never between
 * two letters.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** HTML for `text`: escaped, with `<wbr>` after the separators of its long runs. */
export function softBreaks(text: string): string {
  return escapeHtml(text)
    .split(/(\s+)/)
    // Entities (`&amp;`) hold none of the separators, so escaping first is safe.
    .map((part) => (part.length >= 20 ? part.replace(/([/._:=])(?=[\p{L}\p{N}])/gu, '$1<wbr>') : part))
    .join('');
}
