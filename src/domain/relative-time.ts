/**
 * A moment as a person says it ("3 minutes ago", "yesterday", "12 Nov") and in full
 * ("Thu 12 Nov 2026, 09:05:07 UTC"), for the dashboard's `<time>` elements: the words on
 * the page, the full time on hover. Days are UTC days, as Engram's daily budget and
 * activity counts are: the server does not know the reader's time zone.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

function two(n: number): string {
  return String(n).padStart(2, '0');
}

/** "12 Nov" in `now`'s year, "12 Nov 2025" in another. */
function calendarDay(date: Date, now: Date): string {
  const day = `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]}`;
  return date.getUTCFullYear() === now.getUTCFullYear() ? day : `${day} ${date.getUTCFullYear()}`;
}

/**
 * `at` seen from `now`, both in ms since the epoch: "just now", "3 minutes ago", "5 hours
 * ago", "yesterday", "4 days ago", then the day ("12 Nov"); ahead of `now` the same way
 * ("in 5 minutes", "tomorrow"), for a job's due time.
 */
export function relativeTime(at: number, now: number): string {
  const ago = now - at;
  const span = Math.abs(ago);
  const said = (words: string) => (ago >= 0 ? `${words} ago` : `in ${words}`);
  if (span < 45_000) return ago >= 0 ? 'just now' : 'in a moment';
  if (span < 45 * MINUTE) return said(count(Math.max(1, Math.round(span / MINUTE)), 'minute'));
  if (span < DAY) return said(count(Math.max(1, Math.round(span / HOUR)), 'hour'));
  const days = Math.abs(Math.floor(now / DAY) - Math.floor(at / DAY));
  if (days === 1) return ago >= 0 ? 'yesterday' : 'tomorrow';
  if (days < 7) return said(count(days, 'day'));
  return calendarDay(new Date(at), new Date(now));
}

/** "Thu 12 Nov 2026, 09:05:07 UTC": the whole moment, for a title. */
export function fullTime(at: number): string {
  const date = new Date(at);
  const clock = `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}`;
  return `${WEEKDAYS[date.getUTCDay()]} ${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}, ${clock} UTC`;
}

/** A UTC day (`2026-11-29`, as the activity counts name it) as a person says it: "today", "yesterday", "27 Nov". */
export function dayWords(day: string, now: number): string {
  const at = Date.parse(`${day}T00:00:00Z`);
  const days = Math.floor(now / DAY) - Math.floor(at / DAY);
  if (days === 0) return 'today';
  if (days === 1) return 'yesterday';
  return calendarDay(new Date(at), new Date(now));
}

/** "29 Nov": a UTC day, short, for a chart's axis. */
export function shortDay(day: string): string {
  const at = new Date(`${day}T00:00:00Z`);
  return `${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]}`;
}

/** "Sun 29 Nov 2026": a UTC day in full, for a title. */
export function fullDay(day: string): string {
  const at = new Date(`${day}T00:00:00Z`);
  return `${WEEKDAYS[at.getUTCDay()]} ${at.getUTCDate()} ${MONTHS[at.getUTCMonth()]} ${at.getUTCFullYear()}`;
}
