/**
 * The documentation as the docs tests read it: README.md and every page under docs/.
 * Not a test file.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from './cli.js';

export interface Page {
  /** The path from the repository root: `README.md`, `docs/clients.md`. */
  name: string;
  text: string;
}

/** The docs/*.md page names, sorted: `docs/api.md`, … */
export const DOC_PAGE_NAMES: readonly string[] = readdirSync(path.join(ROOT, 'docs'))
  .filter((file) => file.endsWith('.md'))
  .sort()
  .map((file) => `docs/${file}`);

/** README.md first, then every docs page. */
export const PAGES: readonly Page[] = ['README.md', ...DOC_PAGE_NAMES].map((name) => ({ name, text: readFileSync(path.join(ROOT, name), 'utf8') }));

/** One page's text; throws when the page does not exist. */
export function pageText(name: string): string {
  const page = PAGES.find((candidate) => candidate.name === name);
  if (!page) throw new Error(`no page ${name} (pages: ${PAGES.map((candidate) => candidate.name).join(', ')})`);
  return page.text;
}

/** `text` without its fenced code blocks (``` or ~~~), each replaced by as many empty lines. */
export function withoutCodeBlocks(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, (block) => block.replace(/[^\n]/g, ''));
}

/** The fenced code blocks of `text`: where each starts, its info string (`json`, `sh`, or '') and its body. */
export function codeBlocks(text: string): Array<{ index: number; info: string; body: string }> {
  return [...text.matchAll(/^(```|~~~)([^\n]*)\n([\s\S]*?)^\1[ \t]*$/gm)].map((match) => ({ index: match.index, info: match[2].trim(), body: match[3] }));
}

/**
 * The anchors GitHub gives a page's headings: the heading's text lower-cased, inline code
 * marks and punctuation dropped, spaces turned into `-`; a repeated anchor gets `-1`, `-2`, ….
 */
export function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of withoutCodeBlocks(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const slug = match[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** The link targets of a page's markdown links and images outside code: `docs/x.md#y`, `https://…`. */
export function linkTargets(text: string): string[] {
  const prose = withoutCodeBlocks(text).replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]);
}
