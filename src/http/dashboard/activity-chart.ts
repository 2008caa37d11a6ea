/**
 * The overview's 14 days as a small bar chart, drawn on the server as inline SVG (no
 * script, no dependency, nothing fetched): per day, requests, reflections injected and
 * reflections learnt side by side. The geometry is computed here and the view only writes
 * it out; `summary` is the chart's text alternative.
 */
import type { DailyCounts } from '../../ports/activity.js';
import { shortDay } from '../../domain/relative-time.js';

/** One day of the overview: the agent's activity counts and the reflections learnt that day. */
export interface DayRow extends Pick<DailyCounts, 'requests' | 'injected' | 'extractions'> {
  day: string;
  learnt: number;
}

export const SERIES = [
  { key: 'requests', label: 'Requests' },
  { key: 'injected', label: 'Reflections injected' },
  { key: 'learnt', label: 'Reflections learnt' },
] as const;

type SeriesKey = (typeof SERIES)[number]['key'];

export interface Bar {
  series: SeriesKey;
  x: number;
  y: number;
  width: number;
  height: number;
  /** For the bar's tooltip: "2026-11-27: 3 requests". */
  title: string;
}

export interface ActivityChart {
  width: number;
  height: number;
  bars: Bar[];
  /** Horizontal grid lines with their value, bottom (0) to top (the scale's maximum). */
  grid: { y: number; value: number }[];
  /** Day labels under the first, middle and last day (more would not be readable on a phone). */
  labels: { x: number; text: string }[];
  summary: string;
}

const WIDTH = 640;
const HEIGHT = 170;
const LEFT = 34;
const BOTTOM = 24;
const TOP = 8;

/** 1, 2, 5, 10, 20, 50, …: the smallest at or above `value`, so grid lines carry round numbers. */
function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  const step = [1, 2, 5, 10].find((factor) => factor * power >= value)!;
  return step * power;
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

export function activityChart(days: readonly DayRow[]): ActivityChart {
  const max = niceCeiling(Math.max(0, ...days.flatMap((day) => SERIES.map((series) => day[series.key]))));
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = (WIDTH - LEFT) / Math.max(1, days.length);
  const barWidth = Math.floor((slot - 6) / SERIES.length);
  const scale = (value: number) => (value / max) * plotHeight;
  const bars: Bar[] = days.flatMap((day, index) =>
    SERIES.map((series, position) => {
      const value = day[series.key];
      // A zero still shows as a hairline, so an idle day reads as a day and not a gap.
      const height = Math.max(value > 0 ? 2 : 0.75, scale(value));
      return {
        series: series.key,
        x: Math.round((LEFT + index * slot + 3 + position * barWidth) * 10) / 10,
        y: Math.round((TOP + plotHeight - height) * 10) / 10,
        width: barWidth - 1,
        height: Math.round(height * 10) / 10,
        title: `${shortDay(day.day)}: ${value} ${series.label.toLowerCase()}`,
      };
    }),
  );
  const grid = [0, max / 2, max].filter((value) => Number.isInteger(value)).map((value) => ({ y: Math.round(TOP + plotHeight - scale(value)), value }));
  const picks = [...new Set([0, Math.floor((days.length - 1) / 2), days.length - 1])].filter((index) => index >= 0 && index < days.length);
  const labels = picks.map((index) => ({ x: Math.round(LEFT + index * slot + slot / 2), text: shortDay(days[index]!.day) }));
  const total = (key: SeriesKey) => days.reduce((sum, day) => sum + day[key], 0);
  const busiest = days.reduce<DayRow | undefined>((best, day) => (day.requests > (best?.requests ?? 0) ? day : best), undefined);
  const summary =
    `In the last ${days.length} days: ${plural(total('requests'), 'request', 'requests')}, ` +
    `${plural(total('injected'), 'reflection', 'reflections')} injected, ${plural(total('learnt'), 'reflection', 'reflections')} learnt` +
    (busiest ? `; the busiest day was ${busiest.day}, with ${plural(busiest.requests, 'request', 'requests')}.` : '.');
  return { width: WIDTH, height: HEIGHT, bars, grid, labels, summary };
}
