/** A moment in a person's words, and in full for the hover (`domain/relative-time.ts`). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { dayWords, fullDay, fullTime, relativeTime, shortDay } from '../../src/domain/relative-time.js';

const NOW = Date.UTC(2026, 10, 29, 14, 30, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

test('the past, from seconds to another year', () => {
  const cases: [number, string][] = [
    [NOW - 10_000, 'just now'],
    [NOW - MINUTE, '1 minute ago'],
    [NOW - 3 * MINUTE - 20_000, '3 minutes ago'],
    [NOW - 5 * HOUR, '5 hours ago'],
    // 20 hours ago is yesterday on the calendar, but "20 hours ago" says more.
    [NOW - 20 * HOUR, '20 hours ago'],
    [Date.UTC(2026, 10, 28, 1, 0, 0), 'yesterday'],
    [Date.UTC(2026, 10, 25, 9, 0, 0), '4 days ago'],
    [Date.UTC(2026, 10, 12, 9, 5, 7), '12 Nov'],
    [Date.UTC(2025, 11, 31, 23, 0, 0), '31 Dec 2025'],
  ];
  for (const [at, words] of cases) assert.is(relativeTime(at, NOW), words, new Date(at).toISOString());
});

test('the future (a job that is due), the same way', () => {
  assert.is(relativeTime(NOW + 5_000, NOW), 'in a moment');
  assert.is(relativeTime(NOW + 5 * MINUTE, NOW), 'in 5 minutes');
  assert.is(relativeTime(NOW + 2 * HOUR, NOW), 'in 2 hours');
  assert.is(relativeTime(Date.UTC(2026, 10, 30, 23, 0, 0), NOW), 'tomorrow');
});

test('the full time names the day, the date, the time to the second and the zone', () => {
  assert.is(fullTime(Date.UTC(2026, 10, 12, 9, 5, 7, 949)), 'Thu 12 Nov 2026, 09:05:07 UTC');
});

test("a UTC day: today, yesterday, then the date; short for a chart's axis; in full for a title", () => {
  assert.equal(['2026-11-29', '2026-11-28', '2026-11-20', '2025-12-31'].map((day) => dayWords(day, NOW)), ['today', 'yesterday', '20 Nov', '31 Dec 2025']);
  assert.is(shortDay('2026-11-09'), '9 Nov');
  assert.is(fullDay('2026-11-29'), 'Sun 29 Nov 2026');
});

test.run();
