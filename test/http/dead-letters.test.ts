/**
 * Extraction jobs that fail for good are visible and retryable through the management
 * API and the CLI: an upstream that refuses the extraction call (a 400 is not worth
 * retrying) dead-letters the job with its reason; once the cause is fixed, a retry
 * queues it again and the reflection is learnt. Each cause of a failure is said in words
 * wherever a job is shown (the API, `engram jobs`, `engram dead-letters list`, the
 * dashboard's activity page), while the job waits to be retried and once it is given up.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, cleanEnv } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, idle, startEngram, type TestEngram } from '../support/engram.js';
import { idDigest } from '../../src/control/conversation-id.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';
import { WebSession } from '../support/web-session.js';
import { natsServerBinary, startNatsServer } from '../support/nats-server.js';

test('a refused extraction is a dead letter, listed with its reason, and a retry learns from it', async () => {
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '20' });
  try {
    const agent = await engram.createAgent(upstream.url);
    const other = await engram.createAgent(upstream.url);
    upstream.setExtractor(() => ({ type: 'error', status: 400, body: { error: { message: 'model `gpt-test` does not support tools', type: 'invalid_request_error' } } }));
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Remember: the deploy script is tools/deploy.sh.' }] }),
    });
    assert.is(answered.status, 200);
    await answered.text();

    const path = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/extraction/dead-letters`;
    const listed = await eventually(async () => {
      const reply = await engram.api('GET', path);
      return reply.json.data.length > 0 ? reply.json.data : undefined;
    }, 10_000, 'the dead letter');
    assert.is(listed.length, 1);
    const [dead] = listed;
    assert.is(dead.reason, 'upstream answered 400 Bad Request');
    assert.is(dead.attempts, 1, 'a permanent refusal is not retried');
    assert.is(dead.source, 'conversation');
    assert.ok(dead.turns >= 2);
    assert.not.ok(JSON.stringify(dead).includes('deploy.sh'), 'the listing never shows the transcript');

    // The agent's own token may read its dead letters, not retry them; another agent sees none.
    assert.is((await engram.api('GET', path, undefined, agent.token)).status, 200);
    assert.is((await engram.api('POST', `${path}/${dead.id}/retry`, {}, agent.token)).status, 403);
    const otherPath = `/v0/orgs/${other.orgId}/agents/${other.agentId}/extraction/dead-letters`;
    assert.equal((await engram.api('GET', otherPath)).json.data, []);
    assert.is((await engram.api('POST', `${otherPath}/${dead.id}/retry`, {})).status, 404, "another agent's dead letter is not found there");

    const cli = (...args: string[]) =>
      runCli([...args, '--org', agent.orgId, '--agent', agent.agentId, '--url', engram.url], { env: cleanEnv({ ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN }) });
    const shown = await cli('dead-letters', 'list');
    assert.is(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, dead.id);
    assert.match(shown.stdout, 'upstream answered 400 Bad Request');

    upstream.setExtractor((_request, transcript) =>
      /deploy script/.test(transcript) ? [{ kind: 'factual', content: 'The deploy script is tools/deploy.sh.', topic: 'deploy' }] : [],
    );
    const retried = await cli('dead-letters', 'retry', dead.id);
    assert.is(retried.code, 0, retried.stderr);
    const [learnt] = await engram.waitForReflections(agent, 1);
    assert.match(learnt.content, 'tools/deploy.sh');
    assert.equal((await engram.api('GET', path)).json.data, [], 'the dead letter is gone once retried');
    assert.is((await engram.api('POST', `${path}/${dead.id}/retry`, {})).status, 404, 'a retried dead letter cannot be retried twice');
  } finally {
    await engram.close();
    await upstream.close();
  }
});

/** Each agent's upstream fails in its own way; the word in its conversation tells the scripted extractor which. */
const CAUSES = {
  refused: { reason: 'upstream answered 401 Unauthorized', dead: 'upstream answered 401 Unauthorized' },
  failing: { reason: 'upstream answered 500 Internal Server Error', dead: 'gave up after 2 attempts: upstream answered 500 Internal Server Error' },
  unreachable: { reason: 'upstream unreachable: connection refused', dead: 'gave up after 2 attempts: upstream unreachable: connection refused' },
  slow: { reason: 'timed out: the upstream did not answer within ENGRAM_UPSTREAM_TIMEOUT_MS', dead: 'gave up after 2 attempts: timed out: the upstream did not answer within ENGRAM_UPSTREAM_TIMEOUT_MS' },
  toolless: { reason: 'the model answered without calling record_reflections', dead: 'the model answered without calling record_reflections' },
} as const;
type Cause = keyof typeof CAUSES;

test('every cause of a failed job is said in words: while it waits to be retried and once given up, in the API, the CLI and the activity page', async () => {
  const upstream = await startScriptedUpstream();
  // The unreachable agent's upstream answers its conversation, then goes away.
  const gone = await startScriptedUpstream();
  // The bus's clock, stopped while the failed jobs are looked at: their retries wait until it goes on.
  let stoppedAt: number | undefined;
  const engram: TestEngram = await startEngram(
    { 'settle-ms': '100', 'extraction-max-deliver': '2', 'upstream-timeout-ms': '1500', 'dashboard-upstream-allow-private': 'true' },
    undefined,
    { now: () => stoppedAt ?? Date.now() },
  );
  try {
    upstream.setExtractor((_request, transcript) => {
      if (transcript.includes('refused')) return { type: 'error', status: 401, body: { error: { message: 'Incorrect API key provided: sk-upstr****0000' } } };
      if (transcript.includes('failing')) return { type: 'error', status: 500, body: { error: { message: 'shard 7 of the conversation store is down' } } };
      if (transcript.includes('slow')) return { type: 'hang' };
      return { type: 'text', text: 'I would rather chat about it.' };
    });
    // A person's agents, made through the dashboard's forms: the activity pages are theirs.
    const web = new WebSession(engram.url);
    await web.signIn('failures@example.com', 'a long enough passphrase');
    await web.get('/orgs/new');
    const org = await web.post('/orgs/new', { name: 'failures-org' });
    const agents = {} as Record<Cause, { page: string; orgId: string; agentId: string; conversation: string; token: string }>;
    for (const cause of Object.keys(CAUSES) as Cause[]) {
      await web.get(org.location!);
      const base = cause === 'unreachable' ? gone.url : upstream.url;
      const made = await web.post(org.location!, { intent: 'create', name: cause, base_url: base, api_key: 'sk-x-1234567890', headers: '' });
      const page = made.location!.replace(/\/connect$/, '');
      const [, , orgId, , agentId] = page.split('/');
      const { json } = await engram.api('POST', `/v0/orgs/${orgId}/agents/${agentId}/tokens`, { name: 'sdk' });
      agents[cause] = { page, orgId, agentId, conversation: `conv-${cause}`, token: json.token };
    }
    // The five conversations at once, once every agent is made: their first attempts all
    // fail well within the 5 s before the first retry, however long making the agents took.
    await Promise.all(
      (Object.keys(CAUSES) as Cause[]).map(async (cause) => {
        (cause === 'unreachable' ? gone : upstream).enqueue({ type: 'text', text: 'Noted.' });
        const answered = await fetch(`${engram.url}/v0${agents[cause].page}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${agents[cause].token}`, 'content-type': 'application/json', 'x-engram-conversation': `conv-${cause}` },
          body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: `REMEMBER (${cause}): the release train leaves on Thursdays.` }] }),
        });
        assert.is(answered.status, 200);
        await answered.text();
        // Gone before its job's first attempt, a settle time (100 ms) after this answer.
        if (cause === 'unreachable') await gone.close();
      }),
    );

    const path = (cause: Cause, what: string) => `/v0/orgs/${agents[cause].orgId}/agents/${agents[cause].agentId}/${what}`;
    const cli = (cause: Cause, ...args: string[]) =>
      runCli([...args, '--org', agents[cause].orgId, '--agent', agents[cause].agentId, '--url', engram.url], { env: cleanEnv({ ENGRAM_ADMIN_TOKEN: ADMIN_TOKEN }) });
    const retried: Cause[] = ['failing', 'unreachable', 'slow', 'toolless'];

    // The first deliveries fail; the refusal is dead at once, the others wait to be retried.
    await eventually(async () => {
      const dead = (await engram.api('GET', path('refused', 'extraction/dead-letters'))).json.data.length === 1;
      const failed = await Promise.all(retried.map(async (cause) => (await engram.api('GET', path(cause, 'jobs'))).json.failed.length === 1));
      return dead && failed.every(Boolean) ? true : undefined;
    }, 15_000, 'one dead letter and four failed jobs');
    stoppedAt = Date.now();
    for (const cause of retried) {
      const [job] = (await engram.api('GET', path(cause, 'jobs'))).json.failed;
      assert.equal([job.attempts, job.last_error], [1, CAUSES[cause].reason], cause);
      const shown = await cli(cause, 'jobs');
      assert.is(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, new RegExp(`failed\\s+${job.id}\\s+conversation\\s+\\S*${idDigest(`conv-${cause}`)}\\s.*attempt 2 .*; attempt 1 failed: ${escaped(CAUSES[cause].reason)}$`, 'm'), cause);
      const activity = await web.get(`${agents[cause].page}/activity`);
      assert.match(activity.text, new RegExp(`<section class="card" id="jobs-failed">[^]*<td data-label="Why the last attempt failed">${escaped(html(CAUSES[cause].reason))}</td>`), cause);
    }
    stoppedAt = undefined;

    // The second deliveries fail too: given up, each with its cause.
    await eventually(async () => {
      const dead = await Promise.all(retried.map(async (cause) => (await engram.api('GET', path(cause, 'extraction/dead-letters'))).json.data.length === 1));
      return dead.every(Boolean) ? true : undefined;
    }, 20_000, 'every job given up');
    await idle(engram);
    for (const cause of Object.keys(CAUSES) as Cause[]) {
      const [dead] = (await engram.api('GET', path(cause, 'extraction/dead-letters'))).json.data;
      assert.equal([dead.reason, dead.last_error], [CAUSES[cause].dead, CAUSES[cause].reason], cause);
      assert.is(dead.attempts, cause === 'refused' ? 1 : 2, cause);
      const listed = await cli(cause, 'dead-letters', 'list');
      assert.match(listed.stdout, new RegExp(`^${dead.id}\\s.*${idDigest(`conv-${cause}`)}\\s+${escaped(CAUSES[cause].dead)}$`, 'm'), cause);
      const jobs = await cli(cause, 'jobs');
      assert.match(jobs.stdout, new RegExp(`^dead\\s+${dead.id}\\s.*: ${escaped(CAUSES[cause].dead)}$`, 'm'), cause);
      const activity = await web.get(`${agents[cause].page}/activity`);
      assert.match(activity.text, new RegExp(`<section class="card" id="jobs-dead">[^]*<td data-label="Why">${escaped(html(CAUSES[cause].dead))}</td>`), cause);
      for (const text of [JSON.stringify(dead), listed.stdout, jobs.stdout, activity.text]) {
        assert.not.match(text, /Incorrect API key|shard 7|release train|rather chat/, "neither the upstream's words nor the conversation's");
      }
    }
  } finally {
    await engram.close();
    await upstream.close();
    await gone.close();
  }
});

test('NATS: a failed job waits as failed with why, then is given up with it, as on SQLite', async () => {
  if (!natsServerBinary()) throw new Error('nats-server is not installed; .ci/run installs it (apt-get install nats-server)');
  const nats = await startNatsServer();
  const upstream = await startScriptedUpstream();
  const engram = await startEngram({ 'settle-ms': '50', 'extraction-max-deliver': '2', 'nats-url': nats.url, 'nats-prefix': 'failures', 'secret-key': 'ef'.repeat(32) });
  try {
    assert.match(engram.running.engines.bus, /^nats /);
    const agent = await engram.createAgent(upstream.url);
    upstream.setExtractor(() => ({ type: 'error', status: 503 }));
    upstream.enqueue({ type: 'text', text: 'Noted.' });
    const answered = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-test', messages: [{ role: 'user', content: 'Remember: the cache lives in /var/cache/app.' }] }),
    });
    await answered.text();
    const base = `/v0/orgs/${agent.orgId}/agents/${agent.agentId}`;
    const [failed] = await eventually(async () => {
      const { json } = await engram.api('GET', `${base}/jobs`);
      return json.failed.length > 0 ? json.failed : undefined;
    }, 10_000, 'the failed job');
    assert.equal([failed.attempts, failed.last_error], [1, 'upstream answered 503 Service Unavailable']);
    assert.ok(Date.parse(failed.due_at) > Date.now() - 1_000, 'its retry is ahead (or just due)');
    const [dead] = await eventually(async () => {
      const { json } = await engram.api('GET', `${base}/extraction/dead-letters`);
      return json.data.length > 0 ? json.data : undefined;
    }, 15_000, 'the dead letter');
    assert.equal([dead.reason, dead.last_error, dead.attempts], ['gave up after 2 attempts: upstream answered 503 Service Unavailable', 'upstream answered 503 Service Unavailable', 2]);
  } finally {
    await engram.close();
    await upstream.close();
    await nats.cleanup();
  }
});

/** `text` as a literal in a RegExp. */
function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` as the page's templates escape it. */
function html(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&#34;').replaceAll("'", '&#39;');
}

test.run();
