/**
 * `/jobs` on NATS after a `kill -9` of nats-server, with a job deferred for a day by the
 * daily budget: that job holds the delay stream's ack floor, so every job finished after
 * it was acked above the floor, and a killed 2.9 server brings such messages back stored.
 * Engram stays up through the kill; once it is idle again, `/jobs` lists the deferred job
 * as queued for 00:00 UTC and no finished job at all.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { EXTRACTION_SUBJECT } from '../../src/memory/extraction-job.js';
import { nextUtcDay } from '../../src/memory/budget.js';
import { eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startNatsServer } from '../support/nats-server.js';
import { sleep } from '../contracts/helpers.js';
import { idDigest } from '../../src/control/conversation-id.js';

const agentPath = (agent: TestAgent) => `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;

async function teach(upstream: ScriptedUpstream, agent: TestAgent, conversation: string, fact: string): Promise<void> {
  upstream.enqueue({ type: 'text', text: 'Noted.' });
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  await client.chat.completions.create(
    { model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER: ${fact}` }] },
    { headers: { 'x-engram-conversation': conversation } },
  );
}

interface Job {
  kind: string;
  conversation_id: string | null;
  due_at: string | null;
}

interface Jobs {
  queued: Job[];
  running: Job[];
  failed: Job[];
}

async function jobs(engram: TestEngram, agent: TestAgent): Promise<Jobs> {
  const answer = await engram.api('GET', `${agentPath(agent)}/jobs`);
  assert.is(answer.status, 200, JSON.stringify(answer.json));
  return answer.json;
}

/** While the server is away `/jobs` may fail: then there is no answer yet. */
async function jobsOnceAnswered(engram: TestEngram, agent: TestAgent): Promise<Jobs | undefined> {
  const answer = await engram.api('GET', `${agentPath(agent)}/jobs`);
  return answer.status === 200 ? answer.json : undefined;
}

test('after a kill -9 of nats-server, /jobs shows no finished job as queued while a job deferred for a day holds the ack floor', async () => {
  const nats = await startNatsServer();
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '50', 'nats-url': nats.url, 'nats-prefix': 'killed', 'secret-key': '57'.repeat(32) });
  try {
    const { bus } = engram.running.deps;
    // Past its budget after one conversation: the second waits for 00:00 UTC, nak'ed for up to a day.
    const spent = await engram.createAgent(upstream.url, { memory: { daily_token_budget: 1 } });
    await teach(upstream, spent, 'conv-a', 'The NATS cluster is called heron.');
    await engram.waitForReflections(spent, 1);
    await teach(upstream, spent, 'conv-b', 'Heron runs three JetStream nodes.');
    const isMidnight = (job: Job) => job.due_at !== null && Date.parse(job.due_at) === nextUtcDay(Date.now());
    await eventually(async () => ((await jobs(engram, spent)).queued.some(isMidnight) ? true : undefined), 10_000, 'the second conversation deferred');

    // Another agent's jobs run and finish after it: acked above the deferred job's floor.
    const busy = await engram.createAgent(upstream.url);
    const facts = ['Kestrel is the staging cluster.', 'Deploys need the ops-deploy role.', 'Backups run at 02:00 UTC.', 'The pager rotates on Mondays.'];
    for (const [i, fact] of facts.entries()) await teach(upstream, busy, `conv-${i}`, fact);
    await engram.waitForReflections(busy, facts.length);
    await eventually(async () => ((await bus.pending(EXTRACTION_SUBJECT)) === 1 ? true : undefined), 10_000, 'only the deferred job pending');
    // nats-server 2.9 writes the consumers' acks within a second and the removals from the
    // middle of a stream's block some seconds later: killed in between, the finished jobs
    // come back stored while the scheduler's state keeps them acked.
    await sleep(1_500);
    await nats.restart({ kill: true, downMs: 300 });

    // Idle: Engram reads the restarted server, and the bus holds the deferred job alone.
    await eventually(async () => ((await jobsOnceAnswered(engram, spent))?.queued.some(isMidnight) ? true : undefined), 20_000, 'Engram to read the restarted server');
    await eventually(async () => ((await bus.pending(EXTRACTION_SUBJECT).catch(() => -1)) === 1 ? true : undefined), 20_000, 'the finished jobs removed again');
    const finished = await jobs(engram, busy);
    const extraction = (list: Job[]) => list.filter((job) => job.kind === 'extraction');
    assert.equal([extraction(finished.queued), extraction(finished.running), extraction(finished.failed)], [[], [], []], 'no finished job listed');
    const waiting = await jobs(engram, spent);
    assert.equal(extraction(waiting.queued).map((job) => [job.conversation_id?.endsWith(`x:${idDigest('conv-b')}`), isMidnight(job)]), [[true, true]], 'the deferred job still queued for 00:00 UTC');
    assert.equal(extraction(waiting.running), []);
    assert.is(upstream.extractionRequests().length, 1 + facts.length, 'the deferred job not run');
  } finally {
    await engram.close();
    await upstream.close();
    await nats.cleanup();
  }
});

test.run();
