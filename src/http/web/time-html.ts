/**
 * A moment on a dashboard page: `<time>` with the machine-readable instant, the words a
 * person says ("3 minutes ago", "12 Nov") and the full time on hover (`title`). The words
 * are written when the page is, from Engram's clock (`deps.now`, so tests can hold it).
 */
import { dayWords, fullDay, fullTime, relativeTime } from '../../domain/relative-time.js';
import { escapeHtml } from './soft-breaks.js';

export function timeHtml(at: number, now: number): string {
  const iso = new Date(at).toISOString();
  return `<time datetime="${iso}" title="${escapeHtml(fullTime(at))}">${escapeHtml(relativeTime(at, now))}</time>`;
}

/** A UTC day (`2026-11-29`) the same way: "today", "yesterday", "27 Nov", the full day on hover. */
export function dayHtml(day: string, now: number): string {
  return `<time datetime="${escapeHtml(day)}" title="${escapeHtml(fullDay(day))}">${escapeHtml(dayWords(day, now))}</time>`;
}
