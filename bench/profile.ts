/**
 * Top self-time functions of a V8 `.cpuprofile`, grouped by function and location, and
 * self time per source area. Run on its own: `node --import tsx bench/profile.ts FILE`.
 */
import fs from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { round } from './stats.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function where(url: string, line: number): string {
  if (!url) return '';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const short = file.startsWith(ROOT) ? file.slice(ROOT.length) : file;
  return `${short}:${line + 1}`;
}

/** Area of the code a frame belongs to: src/..., a package, node internals, or V8 itself. */
function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
  if (pkg) return pkg[1];
  if (file.startsWith('node:')) return 'node internals';
  const short = file.startsWith(ROOT) ? file.slice(ROOT.length) : file;
  return short.split('/').slice(0, 2).join('/');
}

export interface ProfileSummary {
  totalMs: number;
  top: Array<{ selfMs: number; share: number; fn: string; at: string }>;
  areas: Array<{ selfMs: number; share: number; area: string }>;
  /** Project functions (src/, machines/) by inclusive time: themselves and all they call. */
  inclusive: Array<{ totalMs: number; share: number; fn: string; at: string }>;
}

export function summariseProfile(file: string, topN = 25): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  /** Native frames (SQLite calls, buffer copies) are named after the nearest project frame above them. */
  const caller = (id: number): string => {
    for (let at = parent.get(id); at !== undefined; at = parent.get(at)) {
      const { url, lineNumber, functionName } = byId.get(at)!.callFrame;
      if (url.includes('/bench/')) return ' (the profiler itself)';
      if (url.startsWith('file:') && !url.includes('/node_modules/')) return ` via ${functionName || '(anonymous)'} ${where(url, lineNumber)}`;
    }
    return '';
  };
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const fns = new Map<string, { selfMs: number; fn: string; at: string }>();
  const areas = new Map<string, number>();
  let total = 0;
  for (const [id, micros] of self) {
    const { callFrame: f } = byId.get(id)!;
    const msSelf = micros / 1000;
    total += msSelf;
    const via = f.url.startsWith('file:') && !f.url.includes('/node_modules/') ? '' : caller(id);
    const key = `${f.functionName}@${f.url}:${f.lineNumber}${via}`;
    const entry = fns.get(key) ?? { selfMs: 0, fn: f.functionName || '(anonymous)', at: where(f.url, f.lineNumber) + via };
    entry.selfMs += msSelf;
    fns.set(key, entry);
    const a = area(f.url, f.functionName);
    areas.set(a, (areas.get(a) ?? 0) + msSelf);
  }
  // Inclusive time: each sample counts once for every distinct project function on its stack.
  const inclusive = new Map<string, { totalMs: number; fn: string; at: string }>();
  const own = (url: string) => url.startsWith('file:') && !url.includes('/node_modules/') && !url.includes('/bench/');
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const f = byId.get(at)!.callFrame;
      if (!own(f.url)) continue;
      const key = `${f.functionName}@${f.url}:${f.lineNumber}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = inclusive.get(key) ?? { totalMs: 0, fn: f.functionName || '(anonymous)', at: where(f.url, f.lineNumber) };
      entry.totalMs += micros / 1000;
      inclusive.set(key, entry);
    }
  }
  const share = (x: number) => round((100 * x) / total, 1);
  return {
    totalMs: round(total, 0),
    top: [...fns.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, topN).map((e) => ({ ...e, selfMs: round(e.selfMs, 1), share: share(e.selfMs) })),
    inclusive: [...inclusive.values()].sort((a, b) => b.totalMs - a.totalMs).slice(0, topN).map((e) => ({ ...e, totalMs: round(e.totalMs, 1), share: share(e.totalMs) })),
    areas: [...areas].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([name, x]) => ({ area: name, selfMs: round(x, 1), share: share(x) })),
  };
}

/** `requests`: how many requests the profiled load completed, for a per-request figure. */
export function formatProfile(s: ProfileSummary, requests?: number): string {
  const busy = s.totalMs - (s.areas.find((a) => a.area === '(idle)')?.selfMs ?? 0);
  const perRequest = requests ? `, ${requests} requests: ${round(busy / requests, 2)} ms of busy CPU per request` : '';
  const lines = [`CPU profile: ${s.totalMs} ms sampled${perRequest}`, 'self time by area:'];
  for (const a of s.areas) lines.push(`  ${String(a.share).padStart(5)}%  ${String(a.selfMs).padStart(8)} ms  ${a.area}`);
  lines.push('top functions by self time:');
  for (const f of s.top) lines.push(`  ${String(f.share).padStart(5)}%  ${String(f.selfMs).padStart(8)} ms  ${f.fn}  ${f.at}`);
  lines.push('project functions by inclusive time:');
  for (const f of s.inclusive) lines.push(`  ${String(f.share).padStart(5)}%  ${String(f.totalMs).padStart(8)} ms  ${f.fn}  ${f.at}`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: bench/profile.ts FILE.cpuprofile [topN]');
  console.log(formatProfile(summariseProfile(file, Number(process.argv[3] ?? 25))));
}
