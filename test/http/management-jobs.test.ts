/**
 * Feedback while memory is learnt: a real Engram (SQLite file, sealed bus) shows an
 * agent's extraction jobs, queued with the time they run (the settle time after the
 * conversation went quiet), running, failed awaiting a retry, and gone once learnt, over
 * the API and in `engram jobs` and `engram reflections list`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { cleanEnv, runCli } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

const test = suite('extraction jobs: API and CLI');

async function converse(agent: TestAgent, text: string): Promise<void> {
  const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: text }] }),
  });
  assert.is(answered.status, 200);
  await answered.text();
}

function cli(engram: TestEngram, agent: TestAgent, ...args: string[]) {
  return runCli([...args, '--org', agent.orgId, '--agent', agent.agentId, '--url', engram.url], { env: cleanEnv({ ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN }) });
}

const jobsOf = async (engram: TestEngram, agent: TestAgent) => {
  const reply = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/jobs`);
  assert.is(reply.status, 200, JSON.stringify(reply.json));
  return reply.json;
};

test('a conversation is queued until it has been quiet for the settle time, then learnt, and the queue says so', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '4000' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const other = await engram.createAgent(upstream.url);
    upstream.setExtractor((_request, transcript) =>
      /deploy script/.test(transcript) ? [{ kind: 'factual', content: 'The deploy script is tools/deploy.sh.', topic: 'deploy', tags: ['release script'] }] : [],
    );
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const before = Date.now();
    await converse(agent, 'Remember: the deploy script is tools/deploy.sh.');

    const jobs = await eventually(async () => {
      const listed = await jobsOf(engram, agent);
      return listed.queued.length > 0 ? listed : undefined;
    }, 5000, 'the job to be queued');
    assert.is(jobs.settle_ms, 4000);
    assert.is(jobs.queued.length, 1);
    const [queued] = jobs.queued;
    const due = Date.parse(queued.due_at);
    assert.ok(due >= before + 4000 - 50 && due <= Date.now() + 4000, `due ${queued.due_at}: the settle time after the answer`);
    assert.is(jobs.next_due_at, queued.due_at);
    assert.is(queued.source, 'conversation');
    assert.ok(queued.turns >= 2);
    assert.type(queued.conversation_id, 'string');
    assert.equal([jobs.running, jobs.failed, jobs.dead, jobs.truncated], [[], [], [], false]);
    assert.not.ok(JSON.stringify(jobs).includes('deploy.sh'), 'a listing never shows the transcript');
    assert.equal((await jobsOf(engram, other)).queued, [], "another agent's queue is its own");
    const ownToken = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/jobs`, undefined, agent.token);
    assert.is(ownToken.status, 200, 'the agent token may watch its own jobs');

    const shown = await cli(engram, agent, 'jobs');
    assert.is(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /quiet for 4 s \(ENGRAM_SETTLE_MS\)/);
    assert.match(shown.stdout, new RegExp(`queued\\s+${queued.id}\\s+conversation\\s+${queued.conversation_id}`));
    assert.match(shown.stdout, /runs in \d+ s/);
    const listed = await cli(engram, agent, 'reflections', 'list');
    assert.is(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /No reflections yet\./);
    assert.match(listed.stdout, /Learning: 1 conversation queued to be learnt, next in \d+ s \(once quiet for 4 s, ENGRAM_SETTLE_MS\)\. Watch with `engram jobs`\./);

    const [learnt] = await engram.waitForReflections(agent, 1);
    assert.ok(Date.now() >= due - 50, 'not learnt before it was due');
    assert.match(learnt.content, 'tools/deploy.sh');
    const after = await eventually(async () => {
      const listed = await jobsOf(engram, agent);
      return listed.queued.length + listed.running.length === 0 ? listed : undefined;
    }, 5000, 'the queue to empty');
    assert.is(after.next_due_at, null);
    const done = await cli(engram, agent, 'jobs');
    assert.match(done.stdout, /No extraction jobs: nothing is waiting to be learnt\./);
    const quiet = await cli(engram, agent, 'reflections', 'list');
    assert.match(quiet.stdout, /tools\/deploy\.sh/);
    assert.not.match(quiet.stdout, /Learning:/, 'nothing to report once learnt');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('a conversation that goes on while its job waits keeps one job, the newest, covering every turn', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '60000' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const messages: Array<{ role: string; content: string }> = [];
    for (const text of ['Where is the deploy script?', 'And the staging config?', 'Which port does staging use?']) {
      messages.push({ role: 'user', content: text });
      upstream.enqueue({ type: 'text', text: `Answer to: ${text}` });
      const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-test', messages }),
      });
      assert.is(answered.status, 200);
      const json = await answered.json();
      messages.push({ role: 'assistant', content: json.choices[0].message.content });
    }
    // Every request has settled (its job published before its answer ended): the bus is idle.
    const { queued } = await jobsOf(engram, agent);
    assert.is(queued.length, 1, 'the waiting job of each earlier turn gave way to the next');
    assert.is(queued[0].turns, 6, 'the one left covers the three questions and their answers');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

test('a failed extraction waits as failed with its next attempt; the retry shows as running', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '20' });
  try {
    const agent = await engram.createAgent(upstream.url);
    upstream.setExtractor(() => ({ type: 'error', status: 503 }));
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    await converse(agent, 'Remember: staging runs on port 8443.');

    const failed = await eventually(async () => {
      const listed = await jobsOf(engram, agent);
      return listed.failed.length > 0 ? listed : undefined;
    }, 10_000, 'the failed job');
    const [job] = failed.failed;
    assert.is(job.attempts, 1);
    assert.ok(Date.parse(job.due_at) > Date.now(), 'its next attempt is ahead');
    assert.equal([failed.queued, failed.running, failed.dead], [[], [], []]);
    const shown = await cli(engram, agent, 'jobs');
    assert.match(shown.stdout, new RegExp(`failed\\s+${job.id}.*attempt 2 in \\d+ s`));
    const listed = await cli(engram, agent, 'reflections', 'list');
    assert.match(listed.stdout, /Learning: 1 failed, to be retried\./);

    // The next attempt (after the consumer's backoff) finds an upstream that does not answer.
    upstream.setExtractor(() => ({ type: 'hang' }));
    const running = await eventually(async () => {
      const listed = await jobsOf(engram, agent);
      return listed.running.length > 0 ? listed : undefined;
    }, 15_000, 'the retry to run');
    assert.equal([running.running[0].id, running.running[0].attempts], [job.id, 2]);
    assert.equal(running.failed, []);
    const again = await cli(engram, agent, 'jobs');
    assert.match(again.stdout, new RegExp(`running\\s+${job.id}.*attempt 2`));
  } finally {
    await upstream.close();
    await engram.close();
  }
});

test.run();
