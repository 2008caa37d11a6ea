/**
 * The one relevance scale in words (DESIGN section 12): a relevance and the agent's bar
 * (`min_score`) as every reader shows them, the request log (dashboard, `engram requests`)
 * and a search of the reflections (dashboard, `engram reflections search`) alike.
 */

/** A relevance, or the bar: two decimals, on the scale of the agent's `min_score`. */
export function relevanceText(relevance: number): string {
  return relevance.toFixed(2);
}

/** `relevance 0.43, at or above this agent's bar of 0.20` / `relevance 0.12, under this agent's bar of 0.20`. */
export function relevanceAgainstBar(relevance: number, bar: number): string {
  return `relevance ${relevanceText(relevance)}, ${relevance >= bar ? 'at or above' : 'under'} this agent's bar of ${relevanceText(bar)}`;
}

/** What the bar means, said once above a search's results. */
export function barRule(bar: number): string {
  return `A request saying this gets a reflection injected unasked when its relevance reaches this agent's bar (min_score) of ${relevanceText(bar)}.`;
}
