import type { Recording } from '../../../machines/conversation.machine.js';
import { sessionDigestOf } from '../../control/conversation-id.js';
import { settledState } from '../../domain/conversation-state.js';
import { storeResponse } from '../chains.js';
import type { ConversationActorDeps, EngramTurn, Recorded } from '../exchange.js';
import type { RecordingWrite } from '../recording-retry.js';
import { openSettlement } from './settlement.js';

const SESSION_MARK_REFRESH_MS = 24 * 60 * 60 * 1000;

/**
 * Records the turn: what the next turn needs (the blocks added, what was seen, the
 * watermark), written against the revision the request read; the Responses record; the
 * session mark. Behind a publish the bus refused, these wait in the retry queue.
 */
export async function record(
  deps: Pick<ConversationActorDeps, 'control' | 'config' | 'cleanedTurns' | 'recordings' | 'now'>,
  input: Recording<EngramTurn>,
): Promise<Recorded> {
  const { control } = deps;
  const { authenticated: { agent }, resolved: { stored }, injected: { state: found }, published } = input;
  // Settled when it was published (a final answer), else here (a tool call: nothing to learn from yet).
  const { settledAt, conversationId: id, compacted, job, response: kept, recorder } = published?.settlement ?? openSettlement(deps, input);
  const queued = job !== undefined;
  const response: RecordingWrite | undefined = kept && { name: 'response', run: () => storeResponse(control, kept) };
  // A turn that opened its conversation names it now (its answer is known).
  const turn = id === undefined ? found : { ...found, id };
  const state: RecordingWrite | undefined = id === undefined ? undefined : {
    name: 'state',
    // A retry reads the state afresh: what the request read is stale by then.
    run: (retry) => control.updateConversation(agent.id, id, (current) => settledState(current, turn, { settledAt, compacted, queued }), retry ? undefined : stored),
  };
  const session = id === undefined ? undefined : sessionDigestOf(id);
  // Marked when the conversation opens, and again after a day of silence so the mark
  // outlives the pruning of idle sessions as long as the conversation itself does.
  const mark: RecordingWrite | undefined =
    session && (!stored || settledAt - stored.value.lastActivityAt > SESSION_MARK_REFRESH_MS)
      ? { name: 'session', run: () => control.conversations.markSession(agent.id, session, settledAt) }
      : undefined;
  // Together: one round trip on a networked store, not three.
  const written = await recorder.write([response, state, mark].filter((write): write is RecordingWrite => write !== undefined));
  return { state: written === 'written' ? ('recorded' as const) : written === 'kept' ? ('deferred' as const) : ('lost' as const), conversationId: id };
}
