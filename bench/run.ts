/**
 * `npm run bench`: Engram's performance against the same scripted upstream called
 * directly, in one run (issue 2, "Performance"). The upstream and Engram each run in
 * their own child process; this process only generates load. Prints one table and
 * writes the figures to `bench/results/<ISO timestamp>.json`. The same HTTP measures run
 * with `/v1/responses` bodies too, then the Responses WebSocket mode (bench/responses.ts),
 * then `recall` over Engram's MCP server with 10,000 reflections (bench/mcp-recall.ts),
 * then what learning (extraction and tagging) sends upstream over an agent-like session
 * (bench/extraction-cost.ts),
 * then what secret redaction costs on 48 KB of agent text (bench/redaction.ts),
 * then what the conversation actor itself costs a turn (bench/actor-cost.ts).
 *
 * Beside "direct" runs a bare Node proxy (bench/bare-proxy-process.ts, its own child): the
 * single-turn HTTP phases and the multi-turn agent workload (bench/multi-turn.ts) measure it
 * too, and Engram's added time and capacity are reported as ratios to it, with issue 12's
 * verdicts (bench/versus-bare.ts) on a full run on at least 4 cores.
 *
 * Beside the bare proxy runs the open-source Portkey gateway (bench/gateway-process.ts, its
 * own process, when `@portkey-ai/gateway` is installed): what a user would pick instead of
 * Engram. The 4 KB chat phases (sequential and 50 concurrent) and the multi-turn workload
 * measure it too; Engram's added time and req/s are reported as ratios to it, with issue 22's
 * targets (bench/versus-gateway.ts), reported, never enforced. Its requests are not streamed:
 * its streaming path fails on Node 20 (it appends to a fetch Response's immutable headers).
 *
 * `npm run bench -- --profile` adds, after the measured phases, a CPU profile of the
 * Engram process under the capacity load, under 400 KB requests and under the multi-turn
 * workload of 50 users (extraction running), summarised by self time (the profiles are
 * left in bench/results/profiles/).
 * `--quick` shrinks every phase, to check the bench itself works.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BareProxyHello } from './bare-proxy-process.js';
import { startGateway, type Gateway } from './gateway-process.js';
import type { EngramHello } from './engram-process.js';
import { startChild, type Child } from './ipc.js';
import { client, closedLoop, directTarget, engramTarget, type Target } from './load.js';
import { capacity, firstByte, heldStreams, latency, retrieval, type Bench } from './phases.js';
import { responsesHttp, wsConcurrent, wsFirstEvent } from './responses.js';
import { mcpRecall } from './mcp-recall.js';
import { transcriptUploads } from './transcripts.js';
import { extractionCost } from './extraction-cost.js';
import { redactionBench } from './redaction.js';
import { actorCost } from './actor-cost.js';
import { agentShape, multiTurn, virtualUsers } from './multi-turn.js';
import { bareVerdicts } from './versus-bare.js';
import { gatewayTargets } from './versus-gateway.js';
import { formatProfile, summariseProfile, type ProfileSummary } from './profile.js';
import { table, writeJson, type Results } from './report.js';
import { bodyTemplate, questions } from './workload.js';
import type { UpstreamHello } from './upstream-process.js';
import { natsServerBinary, startNatsServer } from '../test/support/nats-server.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const RESULTS = path.join(HERE, 'results');
const quick = process.argv.includes('--quick');
const profile = process.argv.includes('--profile');
const scale = (n: number) => (quick ? Math.max(1, Math.round(n / 10)) : n);
const REFLECTIONS = 1000;

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
process.once('SIGINT', () => process.exit(130));
process.once('SIGTERM', () => process.exit(143));

async function profiled(engram: Child<EngramHello>, name: string, load: () => Promise<{ requests: number }>): Promise<ProfileSummary & { requests: number }> {
  const file = path.join(RESULTS, 'profiles', `${name}.cpuprofile`);
  await engram.call('profileStart');
  const { requests } = await load();
  await engram.call('profileStop', { file });
  const summary = summariseProfile(file);
  console.log(`\n${name}: ${path.relative(process.cwd(), file)}\n${formatProfile(summary, requests)}`);
  return { ...summary, requests };
}

/** The commit measured, and whether the work tree had uncommitted changes. */
function revision(): { commit: string; dirty: boolean } | undefined {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: HERE, encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain', '--', '../src', '../machines') !== '' };
  } catch {
    return undefined;
  }
}

/**
 * The same workload with the event bus and the control stores on NATS (a nats-server
 * started here, on loopback, as a deployment would run it beside Engram): a second Engram
 * child, the same 4 KB sequential and 50-concurrent phases.
 */
async function natsMode(upstream: Child<UpstreamHello>, bare: Target, children: Array<Child<unknown>>): Promise<Results['nats']> {
  if (!natsServerBinary()) {
    log('14/14 NATS mode: skipped, no nats-server installed (apt-get install nats-server)');
    return undefined;
  }
  log('14/14 NATS mode: bus on JetStream, control stores on KV; 4 KB sequential, then 50 concurrent');
  const server = await startNatsServer();
  try {
    const engram = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
      env: { BENCH_UPSTREAM_URL: upstream.hello.url, BENCH_REFLECTIONS: String(REFLECTIONS), BENCH_NATS_URL: server.url },
    });
    children.push(engram);
    const bench: Bench = {
      direct: directTarget(upstream.hello),
      bare,
      engram: engramTarget(engram.hello),
      upstream,
      engramChild: engram,
    };
    const latency4k = await latency(bench, 'chat', 4096, { warmup: scale(300), requests: scale(2000), block: 100, firstN: 110_000_000 });
    await upstream.call('reset');
    const cap = await capacity(bench, { concurrency: 50, warmupMs: quick ? 500 : 2000, durationMs: quick ? 1000 : 5000, firstN: 120_000_000 });
    await engram.stop();
    children.splice(children.indexOf(engram), 1);
    return { server: '2.9 (Debian nats-server, loopback)', latency4k, capacity: cap };
  } finally {
    await server.cleanup();
  }
}

async function main(): Promise<void> {
  const startedAt = new Date().toISOString();
  const started = performance.now();
  const children: Array<Child<unknown>> = [];
  let gateway: Gateway | undefined;
  try {
    log('starting the scripted upstream, the bare proxy, the Portkey gateway and Engram in child processes');
    const upstream = await startChild<UpstreamHello>(path.join(HERE, 'upstream-process.ts'));
    children.push(upstream);
    const bareProxy = await startChild<BareProxyHello>(path.join(HERE, 'bare-proxy-process.ts'), { env: { BENCH_UPSTREAM_URL: upstream.hello.url } });
    children.push(bareProxy);
    // Forwards the client's headers: the direct token reaches the upstream as it does direct.
    const bare: Target = { name: 'bare', origin: bareProxy.hello.url, prefix: '', token: 'sk-bench-direct-0000000000000000' };
    gateway = await startGateway(upstream.hello.url);
    log(gateway ? `Portkey gateway ${gateway.version} at ${gateway.target.origin}` : 'Portkey gateway: not installed (npm install --save-dev @portkey-ai/gateway), its rows are left out');
    const engram = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
      env: { BENCH_UPSTREAM_URL: upstream.hello.url, BENCH_REFLECTIONS: String(REFLECTIONS) },
    });
    children.push(engram);
    log(`Engram at ${engram.hello.url} with ${engram.hello.reflections} reflections (seeded in ${Math.round(engram.hello.seedMs)} ms)`);
    const bench: Bench = {
      direct: directTarget(upstream.hello),
      bare,
      ...(gateway ? { gateway: gateway.target } : {}),
      engram: engramTarget(engram.hello),
      upstream,
      engramChild: engram,
    };
    // The gateway is measured on 4 KB chat completions only (the Anthropic-shaped and streamed phases go without it).
    const withoutGateway: Bench = { ...bench, gateway: undefined };
    // The Responses and WebSocket phases compare with direct only.
    const withoutBare: Bench = { ...withoutGateway, bare: undefined };

    log('1/14 added latency, 4 KB, sequential (direct, bare proxy, Portkey gateway, Engram)');
    const latency4k = await latency(bench, 'chat', 4096, { warmup: scale(300), requests: scale(2000), block: 100, firstN: 0 });
    await upstream.call('reset');
    log('2/14 added latency, 400 KB, sequential');
    const latency400k = await latency(withoutGateway, 'messages', 400 * 1024, { warmup: scale(30), requests: scale(300), block: 25, firstN: 10_000_000 });
    log('3/14 capacity, 50 concurrent');
    const cap = await capacity(bench, { concurrency: 50, warmupMs: quick ? 500 : 2000, durationMs: quick ? 1000 : 5000, firstN: 20_000_000 });
    log('4/14 streaming, time to first byte');
    const ttfb = await firstByte(withoutGateway, { warmup: scale(100), requests: scale(500), block: 50, firstN: 30_000_000 });
    log('5/14 1,000 concurrent streams held');
    const streams = await heldStreams(withoutGateway, { count: 1000, eachMs: 3000, rampMs: 500, firstN: 40_000_000 });
    await upstream.call('reset');
    log('6/14 Responses over HTTP: added latency 4 KB and 400 KB, stream time to first byte');
    const responsesOverHttp = await responsesHttp(withoutBare, scale, 80_000_000);
    log('7/14 Responses over WebSocket: time to the first event of each chained turn');
    const firstEvent = await wsFirstEvent(withoutBare, { chains: scale(200), warmup: scale(20), turns: 5, block: 10, firstN: 90_000_000 });
    log('8/14 Responses over WebSocket: 500 connections at once, 3 turns each');
    const concurrent500 = await wsConcurrent(withoutBare, { connections: 500, turns: 3, firstN: 95_000_000 });
    log('9/14 retrieval over 10,000 reflections, in the Engram process');
    const found = await retrieval(bench, { reflections: 10_000, iterations: scale(1000), warmup: scale(100) });
    log('10/14 MCP recall over HTTP, one session, 10,000 reflections (a second Engram child)');
    const recall10k = await mcpRecall(upstream.hello.url, { reflections: 10_000, calls: scale(500), warmup: scale(50) });
    log('11/14 transcript uploads: 20 MB Codex rollouts, unchanged and grown re-uploads, one of 60 MB');
    const transcripts = await transcriptUploads(engram, { uploads: quick ? 2 : 5 });
    log('12/14 learning cost: an agent session through Engram (a third Engram child, settle 200 ms, tagging interval 1 s); (extraction + tagging bytes) / conversation bytes');
    const cost = await extractionCost(upstream, { settleMs: 200, taggingIntervalMs: 1000 });
    log(
      `12/14 session: ${cost.session.extraction_bytes} extraction bytes in ${cost.session.extraction_requests} calls + ` +
        `${cost.session.tagging_bytes} tagging bytes in ${cost.session.tagging_requests} calls / ` +
        `${cost.session.conversation_bytes} conversation bytes in ${cost.session.conversation_requests} requests = ${(cost.session.ratio * 100).toFixed(2)}% ` +
        `(extraction ${(cost.session.extraction_ratio * 100).toFixed(2)}%, tagging ${(cost.session.tagging_ratio * 100).toFixed(2)}%); ` +
        `each task alone: ${cost.task_alone.extraction_bytes + cost.task_alone.tagging_bytes} / ${cost.task_alone.conversation_bytes} = ${(cost.task_alone.ratio * 100).toFixed(2)}%; ` +
        `lesson lines kept ${cost.session.lessons_kept}/${cost.session.lessons}, memories tagged ${cost.session.tagged}/${cost.session.remembered}`,
    );
    log(
      `13/14 multi-turn agent workload (a fourth Engram child, ${REFLECTIONS} reflections, settle 300 ms): ` +
        '4 KB system prompt, 6 turns, the whole history re-sent; 1 user, a 400 KB conversation continued, then 50 users',
    );
    const turns = await multiTurn(upstream, bare, gateway?.target, {
      reflections: REFLECTIONS,
      settleMs: 300,
      sequentialConversations: scale(150),
      continuedConversations: scale(6),
      continuedTurns: 10,
      users: 50,
      warmupMs: quick ? 500 : 2000,
      durationMs: quick ? 1000 : 5000,
      drainTimeoutMs: quick ? 5000 : 20_000,
    });
    const nats = await natsMode(upstream, bare, children);
    log('redaction: redactSecrets on 48 KB of agent text, in this process, now and before the ruleset (bench/redaction.ts)');
    const redaction = await redactionBench({ iterations: scale(500) });
    log('the conversation actor: the real machine with steps that resolve at once, in this process (bench/actor-cost.ts)');
    const actor = await actorCost({ turns: scale(20_000) });

    const results: Results = {
      startedAt,
      revision: revision(),
      machine: { cpus: os.availableParallelism(), node: process.version, platform: `${os.platform()} ${os.arch()}` },
      ...(gateway ? { gateway: { package: '@portkey-ai/gateway', version: gateway.version, requests: 'chat completions, not streamed (its streaming fails on Node 20)' } } : {}),
      reflections: REFLECTIONS,
      latency4k,
      latency400k,
      capacity: cap,
      firstByte: ttfb,
      streams,
      retrieval: found,
      responses: { http: responsesOverHttp, ws: { ...firstEvent, concurrent500 } },
      mcp: { recall_10k: recall10k },
      transcripts,
      extractionCost: cost,
      ...(nats ? { nats } : {}),
      redaction,
      actor,
      multiTurn: turns,
      durationSeconds: Math.round((performance.now() - started) / 1000),
    };
    results.bareVerdicts = bareVerdicts(results, { quick, cpus: results.machine.cpus });
    if (gateway) results.gatewayTargets = gatewayTargets(results, { quick });
    console.log(table(results));

    if (profile) {
      const asks = questions(200, 9);
      const small = bodyTemplate('chat', 4096, asks);
      const large = bodyTemplate('messages', 400 * 1024, asks);
      const c = client(bench.engram, 50);
      try {
        results.profiles = {
          capacity: await profiled(engram, 'capacity', () => closedLoop(c, 'chat', (n) => small.body(n), 50, 5000, 50_000_000)),
          latency400k: await profiled(engram, 'latency-400k', () => closedLoop(c, 'messages', (n) => large.body(n), 1, 4000, 60_000_000)),
        };
      } finally {
        await c.close();
      }
      // The multi-turn workload as measured in phase 13: its own Engram child, extraction running.
      const agentEngram = await startChild<EngramHello>(path.join(HERE, 'engram-process.ts'), {
        env: { BENCH_UPSTREAM_URL: upstream.hello.url, BENCH_REFLECTIONS: String(REFLECTIONS), BENCH_SETTLE_MS: '300' },
      });
      children.push(agentEngram);
      const users = client(engramTarget(agentEngram.hello), 50);
      try {
        await virtualUsers(users, agentShape(6), 50, 2000, 70_000_000);
        results.profiles.multiTurn = await profiled(agentEngram, 'multi-turn-50-users', () => virtualUsers(users, agentShape(6), 50, 5000, 80_000_000));
      } finally {
        await users.close();
      }
    }
    log(`figures written to ${path.relative(process.cwd(), writeJson(results, RESULTS))}`);
  } finally {
    await Promise.all([...children.reverse().map((child) => child.stop()), gateway?.stop()]);
  }
}

await main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
