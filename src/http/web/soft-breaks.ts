/**
 * Where a line may break inside a value: a host name, a path, a URL, an id. A browser
 * breaks "db-stage-9.internal" after its hyphens ("db-stage-|9.internal") and, as a last
 * resort, anywhere; a reader then takes the piece for the whole. So a value is cut into
 * pieces after each `/` and `.` that a letter or digit follows, each piece is kept on one
 * line (`.seg`, `white-space: nowrap`), and a `<wbr>` (a break opportunity that copying
 * leaves out) goes between them: the line breaks where a typesetter would break a URL,
 * never at a hyphen, never between two letters.
 *
 * A piece longer than `LONGEST_KEPT` characters (a token, a hash) is left free to break
 * anywhere: on a phone it would otherwise be wider than the screen.
 */
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** About the most characters of a monospaced or prose line that fit a phone's card (390 px). */
const LONGEST_KEPT = 32;

/** Something a person reads as one value, not as words: it holds a `.`, `/` or `:` between two letters or digits. */
const VALUE_LIKE = /[\p{L}\p{N}][./:][\p{L}\p{N}]/u;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ESCAPES[char]!);
}

/** One run without spaces, as HTML: pieces kept whole, a break opportunity after each `/` and `.`. */
function breakableRun(run: string): string {
  return run
    .split(/(?<=[/.])(?=[\p{L}\p{N}])/u)
    .map((piece) => (piece.length <= LONGEST_KEPT ? `<span class="seg">${escapeHtml(piece)}</span>` : escapeHtml(piece)))
    .join('<wbr>');
}

/**
 * HTML for prose (a reflection's content): escaped, its values (see `VALUE_LIKE`) and its
 * long runs (20 characters or more without a space) cut into pieces that break only
 * after `/` and `.`; its words wrap at spaces as usual.
 */
export function softBreaks(text: string): string {
  return text
    .split(/(\s+)/)
    .map((part, index) => (index % 2 === 0 && (part.length >= 20 || VALUE_LIKE.test(part)) ? breakableRun(part) : escapeHtml(part)))
    .join('');
}

/**
 * HTML for one value shown whole (a host name, a project, a command): a `<span>` whose
 * title holds the whole value, which breaks only at its spaces and after `/` and `.`.
 * `className` adds classes (`mono`).
 */
export function valueHtml(value: string, className = ''): string {
  const runs = value
    .split(/(\s+)/)
    .map((part, index) => (index % 2 === 0 ? (part ? breakableRun(part) : '') : escapeHtml(part)))
    .join('');
  return `<span class="${['value', className].filter(Boolean).join(' ')}" title="${escapeHtml(value)}">${runs}</span>`;
}
