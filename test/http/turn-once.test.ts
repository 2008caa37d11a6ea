/**
 * A turn does each thing once (issue 22): one token lookup, one read of its
 * conversation's state and one write of it, through the `openai` SDK over HTTP, streamed
 * and not, and over the Responses WebSocket. The counts come from the real stores, each
 * call passed through to them and counted on the way.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import WebSocket from 'ws';
import { startScriptedUpstream, type ScriptedUpstream } from '../support/scripted-upstream/index.js';
import { startEngram, type TestAgent, type TestEngram } from '../support/engram.js';

interface Counts {
  tokenLookups: number;
  stateReads: number;
  stateWrites: number;
}

interface Context {
  upstream: ScriptedUpstream;
  engram: TestEngram;
  agent: TestAgent;
  counts: Counts;
}
const test = suite<Context>('each thing once per turn');

/** Replaces `object[name]` with a function that counts each call and then makes it. */
function counted<O extends object, K extends keyof O>(object: O, name: K, count: () => void): void {
  const original = object[name] as (...args: unknown[]) => unknown;
  Object.defineProperty(object, name, {
    value: (...args: unknown[]) => {
      count();
      return original.apply(object, args);
    },
  });
}

test.before(async (context) => {
  context.upstream = await startScriptedUpstream();
  // No extraction job runs during the test (it writes the watermark): the counts are the turns' own.
  context.engram = await startEngram({ 'settle-ms': '600000' });
  context.agent = await context.engram.createAgent(context.upstream.url);
  const { control } = context.engram.running.deps;
  const counts: Counts = { tokenLookups: 0, stateReads: 0, stateWrites: 0 };
  counted(control.directory, 'findToken', () => counts.tokenLookups++);
  counted(control.conversations, 'get', () => counts.stateReads++);
  counted(control.conversations, 'put', () => counts.stateWrites++);
  context.counts = counts;
});
test.before.each(({ upstream }) => upstream.reset());
test.after(async ({ upstream, engram }) => {
  await engram.close();
  await upstream.close();
});

/** What `turn` cost, counted once its answer was whole (the turn is recorded before its end reaches the client). */
async function costOf(counts: Counts, turn: () => Promise<unknown>): Promise<Counts> {
  const before = { ...counts };
  await turn();
  return { tokenLookups: counts.tokenLookups - before.tokenLookups, stateReads: counts.stateReads - before.stateReads, stateWrites: counts.stateWrites - before.stateWrites };
}

const ONCE: Counts = { tokenLookups: 1, stateReads: 1, stateWrites: 1 };
/** A turn that opens its conversation holds no earlier answer: there is no state to read. */
const OPENING: Counts = { ...ONCE, stateReads: 0 };

test('each chat turn looks up its token once, reads its state once and writes it once, streamed or not', async ({ upstream, agent, counts }) => {
  const client = new OpenAI({ baseURL: `${agent.baseUrl}/v1`, apiKey: agent.token, maxRetries: 0 });
  const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
    { role: 'system', content: 'You are a careful coding agent.' },
    { role: 'user', content: 'Where does the billing service keep its migrations?' },
  ];
  for (let turn = 1; turn <= 3; turn++) {
    upstream.enqueue({ type: 'text', text: `Answer ${turn}.` });
    const cost = await costOf(counts, async () => {
      const answer = await client.chat.completions.create({ model: 'gpt-test', messages });
      messages.push({ role: 'assistant', content: answer.choices[0].message.content ?? '' }, { role: 'user', content: `And step ${turn}?` });
    });
    assert.equal(cost, turn === 1 ? OPENING : ONCE, `turn ${turn}`);
  }
  upstream.enqueue({ type: 'text', text: 'A streamed answer.' });
  const streamed = await costOf(counts, async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-test', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.is(text, 'A streamed answer.');
  });
  assert.equal(streamed, ONCE, 'the streamed turn');
});

test('a Responses WebSocket turn looks up its token once, reads its state once and writes it once', async ({ upstream, agent, counts }) => {
  const socket = new WebSocket(`${agent.baseUrl.replace(/^http/, 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${agent.token}` } });
  const frames: any[] = [];
  const waiting: Array<() => void> = [];
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)));
    waiting.shift()?.();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const completed = async () => {
    for (;;) {
      const frame = frames.shift();
      if (frame === undefined) await new Promise<void>((resolve) => waiting.push(resolve));
      else if (frame.type === 'response.completed' || frame.type === 'error') return frame;
    }
  };
  let previous: string | undefined;
  for (let turn = 1; turn <= 2; turn++) {
    upstream.enqueue({ type: 'text', text: `Socket answer ${turn}.` });
    const cost = await costOf(counts, async () => {
      socket.send(
        JSON.stringify({
          type: 'response.create',
          model: 'gpt-test',
          store: false,
          ...(previous ? { previous_response_id: previous } : {}),
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: `Question ${turn} about the deploy.` }] }],
        }),
      );
      const frame = await completed();
      assert.is(frame.type, 'response.completed', JSON.stringify(frame));
      previous = frame.response.id;
    });
    assert.equal(cost, turn === 1 ? OPENING : ONCE, `socket turn ${turn}`);
  }
  socket.close();
});

test.run();
