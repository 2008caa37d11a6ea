/**
 * Text that Engram frames in tags of its own (the blocks it injects into a conversation,
 * the parts of an extraction request) is data: a stored reflection or a turn that happens
 * to hold one of those tags must not close the frame early, nor open another one.
 */

/**
 * A function that turns the `<` of every opening or closing tag whose name starts with
 * one of `names` into `&lt;` (any case): `<engram-reflections>` or `</transcript>` inside
 * the text then reads as text. Everything else is left as it is.
 */
export function tagNeutraliser(names: readonly string[]): (text: string) => string {
  const escaped = names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(`<(\\/?(?:${escaped.join('|')}))`, 'gi');
  return (text) => text.replace(pattern, '&lt;$1');
}
