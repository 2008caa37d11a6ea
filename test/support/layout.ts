/**
 * What "the layout holds" means for the dashboard, checked in the page itself:
 * - nothing is wider than the viewport, no table runs past its card, and nothing runs out
 *   of its table cell;
 * - no word in a table cell or a button is broken inside ("fa/ct/u/al"): a word is a run
 *   of letters and digits, and a line may break at a space, a slash or a hyphen there;
 * - a value (a host name, a path, an id, a timestamp: a run without spaces that holds a
 *   `.`, `/` or `:` between two letters or digits, or any run in `code`, `.mono` or
 *   `time`) breaks only after a `/` or a `.`: never at its hyphens ("db-stage-|9.internal",
 *   "2026-11-|29T01:24:16.949Z") nor between two characters;
 * - a code block (`pre`) never breaks a run at all ("http://127.0.0.1:4|4443/v1"; the bar marks the break): it
 *   scrolls sideways instead, inside its card.
 */
import type { Page } from 'playwright-core';

export async function layoutProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const width = window.innerWidth;
    const pageWidth = document.documentElement.scrollWidth;
    if (pageWidth > width) problems.push(`the page is ${pageWidth} px wide in a ${width} px viewport`);
    for (const table of document.querySelectorAll('table')) {
      const box = table.parentElement!;
      const style = getComputedStyle(box);
      const inner = box.getBoundingClientRect().right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth);
      const right = table.getBoundingClientRect().right;
      if (right > inner + 1) problems.push(`<table id="${table.id}"> runs ${Math.round(right - inner)} px past its <${box.tagName.toLowerCase()}>`);
    }
    // A cell of a fixed-layout table does not grow: what does not fit runs over the next column.
    for (const cell of document.querySelectorAll('td')) {
      if (cell.scrollWidth > cell.clientWidth + 1) problems.push(`a <td data-label="${cell.dataset.label ?? ''}"> holds ${cell.scrollWidth} px in ${cell.clientWidth} px: it runs over its neighbour`);
    }

    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
      const parent = node.parentElement;
      if (!parent || parent.closest('script, style, svg, textarea, option')) continue;
      const text = node.textContent ?? '';
      const block = parent.closest('pre');
      const value = parent.closest('code, .mono, time');
      const cell = parent.closest('td, th, button, .button');
      for (const match of text.matchAll(/\S+/g)) {
        const run = match[0];
        const looksLikeValue = /[\p{L}\p{N}][./:][\p{L}\p{N}]/u.test(run);
        if (run.length < 2 || !(block || value || looksLikeValue || cell)) continue;
        // Where the run goes to a new line: the characters whose box starts lower than the one before
        // (by more than a few pixels: glyphs on one line differ by one or two). Inline, not in a
        // helper: tsx would wrap a named function in a helper the page lacks.
        const breaks: number[] = [];
        const range = document.createRange();
        let last: number | undefined;
        for (let index = 0; index < run.length; index++) {
          range.setStart(node, match.index! + index);
          range.setEnd(node, match.index! + index + 1);
          const rect = [...range.getClientRects()].find((one) => one.width > 0);
          if (!rect) continue;
          if (last !== undefined && rect.top > last + 4) breaks.push(index);
          last = rect.top;
        }
        for (const at of breaks) {
          const before = run[at - 1]!;
          const where = `in a <${(block ?? value ?? cell ?? parent).tagName.toLowerCase()}${block?.id ? ` id="${block.id}"` : ''}>`;
          const shown = `"${run.slice(0, at)}|${run.slice(at)}"`;
          if (block) problems.push(`${shown} is broken ${where}: a code block scrolls instead`);
          else if ((value || looksLikeValue) && before !== '/' && before !== '.') problems.push(`${shown} is broken ${where}: a value breaks only after "/" or "."`);
          else if (cell && /[\p{L}\p{N}]/u.test(before) && /[\p{L}\p{N}]/u.test(run[at]!)) problems.push(`${shown} is broken inside a word ${where}`);
        }
      }
    }
    return problems;
  });
}

/** The desktop and phone viewports every dashboard page must hold its layout at. */
export const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** `layoutProblems` of the page at `url` at each of `VIEWPORTS`, each named by its width. */
export async function layoutProblemsAtEachWidth(page: Page, url: string): Promise<string[]> {
  const problems: string[] = [];
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize(viewport);
    await page.goto(url);
    for (const problem of await layoutProblems(page)) problems.push(`at ${viewport.width} px: ${problem}`);
  }
  return problems;
}
