/**
 * What "the layout holds" means for the dashboard, checked in the page itself: nothing is
 * wider than the viewport, no table runs past its card, no code block needs sideways scrolling, and no word in a table
 * cell or a button is broken inside ("fa/ct/u/al"). A word is a run of letters and digits:
 * a line may break at a space, a slash or a hyphen, never between two letters.
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
    for (const block of document.querySelectorAll('pre')) {
      if (block.scrollWidth > block.clientWidth + 1) problems.push(`<pre id="${block.id}"> scrolls sideways (${block.scrollWidth} px of content in ${block.clientWidth} px)`);
    }
    for (const root of document.querySelectorAll('td, th, button, .button')) {
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const match of (node.textContent ?? '').matchAll(/[\p{L}\p{N}]+/gu)) {
          const range = document.createRange();
          range.setStart(node, match.index!);
          range.setEnd(node, match.index! + match[0].length);
          // One rectangle per line the word sits on (empty ones are collapsed or hidden text).
          const tops = new Set([...range.getClientRects()].filter((rect) => rect.width > 0).map((rect) => Math.round(rect.top)));
          if (tops.size > 1) problems.push(`"${match[0]}" is broken over ${tops.size} lines in a <${root.tagName.toLowerCase()}>`);
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
