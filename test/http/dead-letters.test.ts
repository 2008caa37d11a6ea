/**
 * Extraction jobs that fail for good are visible and retryable through the management
 * API and the CLI: an upstream that refuses the extraction call (a 400 is not worth
 * retrying) dead-letters the job with its reason; once the cause is fixed, a retry
 * queues it again and the reflection is learnt.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli, cleanEnv } from '../support/cli.js';
import { ADMIN_TOKEN, eventually, startEngram } from '../support/engram.js';
import { startScriptedUpstream } from '../support/scripted-upstream/index.js';

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

test.run();
