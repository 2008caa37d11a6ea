import fs from 'node:fs';
const p = JSON.parse(fs.readFileSync('bench/results/profiles/capacity.cpuprofile', 'utf8'));
const byId = new Map<number, any>(p.nodes.map((n: any) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const counts = new Map<number, number>();
for (const s of p.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
const target = process.argv[2];
const stacks = new Map<string, number>();
for (const [id, c] of counts) {
  const n = byId.get(id);
  if (n.callFrame.functionName !== target) continue;
  let chain: string[] = []; let cur = parent.get(id);
  for (let i = 0; i < 6 && cur !== undefined; i++) { const m = byId.get(cur); chain.push(`${m.callFrame.functionName}@${m.callFrame.url.split('/').slice(-1)[0]}:${m.callFrame.lineNumber + 1}`); cur = parent.get(cur); }
  const k = chain.join(' < '); stacks.set(k, (stacks.get(k) ?? 0) + c);
}
for (const [k, c] of [...stacks].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(c, k);
