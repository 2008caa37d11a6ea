/**
 * A client kind is its profile: a made-up one (`fixtures/made-up-client`), registered
 * beside the real ones, has its session, its place, its chores and its MCP tool names honoured through the
 * proxy, with no line of Engram naming it. The real kinds do not know its signals, so
 * each assertion fails when the profile is not read.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { eventually, idle, startEngram, type TestAgent, type TestEngram } from '../support/engram.js';
import { CLIENTS } from '../../src/clients/index.js';
import { idDigest } from '../../src/control/conversation-id.js';
import { QUILL_CHORE, quill } from '../fixtures/made-up-client/profile.js';

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
}
const test = suite<Context>('a made-up client profile');

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  context.engram = await startEngram({ 'settle-ms': '50' }, undefined, { clients: [...CLIENTS, quill] });
});
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** A chat request shaped like Quill's: its workspace in the system prompt, its session in a header. */
async function quillTurn(agent: TestAgent, workspace: string, text: string, session?: string): Promise<Response> {
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, ...(session ? { 'x-quill-session': session } : {}) },
    body: JSON.stringify({
      model: 'gpt-test',
      messages: [
        { role: 'system', content: `You are Quill, a writing agent.\n<quill-workspace path="${workspace}"/>` },
        { role: 'user', content: text },
      ],
    }),
  });
  assert.is(response.status, 200, await response.clone().text());
  await response.text();
  return response;
}

const lastForwarded = (upstream: ScriptedUpstream): string => JSON.stringify(upstream.conversationRequests().at(-1)!.json);

async function logged(engram: TestEngram, agent: TestAgent, response: Response) {
  return eventually(async () => {
    const answer = await engram.api('GET', `/v0/orgs/${agent.orgId}/agents/${agent.agentId}/requests/${response.headers.get('x-engram-request-id')}`);
    return answer.status === 200 ? answer.json : undefined;
  }, 5_000, 'the request log entry');
}

test('its session names the conversation and its workspace the scope', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const turn = await quillTurn(agent, '/home/dev/src/zeta-app', 'REMEMBER: Release notes go in docs/releases.', 'quill-session-1');
  const entry = await logged(engram, agent, turn);
  assert.is(entry.scope, 'zeta-app', 'the workspace Quill names');
  assert.ok(String(entry.conversation_id).startsWith(`s:${idDigest('quill-session-1')}:`), entry.conversation_id);
  const [lesson] = await engram.waitForReflections(agent, 1);
  assert.is(lesson.scope, 'zeta-app', 'learnt in that project');

  // Its session in the body, on the protocol its profile reads it for.
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}` },
    body: JSON.stringify({ model: 'gpt-test', quill_session: 'quill-session-2', messages: [{ role: 'user', content: 'Where do release notes go?' }] }),
  });
  await response.text();
  const body = await logged(engram, agent, response);
  assert.ok(String(body.conversation_id).startsWith(`s:${idDigest('quill-session-2')}:`), body.conversation_id);
});

test('its own chore gets no memory and teaches none', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  await quillTurn(agent, '/home/dev/src/eta-app', 'REMEMBER EVERYWHERE: Spell-check every draft with aspell.', 'quill-session-3');
  await engram.waitForReflections(agent, 1);
  await idle(engram);
  const extractions = upstream.extractionRequests().length;

  const chore = await quillTurn(agent, '/home/dev/src/eta-app', `${QUILL_CHORE} REMEMBER: Drafts are due on Fridays. Summarise: spell-check every draft.`, 'quill-session-3');
  assert.not.match(lastForwarded(upstream), /engram-reflections|aspell/, 'no reflection goes into it, though one matches its words');
  const entry = await logged(engram, agent, chore);
  assert.equal([entry.reason, entry.injected], ['client_chore', []]);

  // A real turn after it is learnt from: once that is done, the chore's lesson has not been.
  await quillTurn(agent, '/home/dev/src/eta-app', 'REMEMBER: Titles are in sentence case.', 'quill-session-4');
  await engram.waitForReflections(agent, 2);
  await idle(engram);
  assert.is(upstream.extractionRequests().length, extractions + 1, 'one extraction: the real turn, not the chore');
  assert.not.ok((await engram.reflections(agent)).some((reflection: { content: string }) => reflection.content.includes('Fridays')));
});

test('Engram\'s tools under its MCP naming form get the memory index', async ({ engram, upstream }) => {
  const agent = await engram.createAgent(upstream.url);
  const tool = (name: string) => ({ type: 'function', function: { name, description: 'A tool.', parameters: { type: 'object', properties: {} } } });
  const response = await fetch(`${agent.baseUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${agent.token}`, 'x-quill-session': 'quill-session-5' },
    body: JSON.stringify({ model: 'gpt-test', tools: [tool('quill__engram__recall'), tool('quill__engram__remember')], messages: [{ role: 'user', content: 'Draft the notes.' }] }),
  });
  assert.is(response.status, 200, await response.text());
  assert.match(lastForwarded(upstream), /<engram-memory-index>[^]*`quill__engram__recall`/, 'the index names recall as Quill calls it');
});

test.run();
