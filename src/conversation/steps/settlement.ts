/**
 * What settling a completed 2xx answer keeps (a failed turn changes nothing): the
 * Responses record, cached at once; after a final answer, the new turns for extraction.
 * Settled once, by `publish` for a final answer, else by `record`.
 *
 * Writes the store refuses are kept and retried (`RecordingRetry`), so each may run again
 * after newer turns landed: the response record is the same record again, the job is
 * re-published under its own message id without replacing a newer waiting job, the state is
 * re-applied to the latest one (`settledState`), the session mark only moves forward.
 */
import type { Publishing } from '../../../machines/conversation.machine.js';
import { pendingTurns } from '../../domain/conversation-state.js';
import { selectNewTurns, type UnredactedJob } from '../../memory/extraction.js';
import { cacheResponse, type NewLink } from '../chains.js';
import type { ConversationActorDeps, EngramTurn, Settlement } from '../exchange.js';
import { settledConversationId } from '../identity.js';
import { instructionFiles } from '../../clients/index.js';

/** What a settled answer leaves to write, decided from the turn alone. */
export type SettlementPlan = Pick<Settlement, 'conversationId' | 'job' | 'compacted'> & {
  /** The Responses record of the answer, to cache and, when the client asked to keep it, to store. */
  link?: NewLink;
};

/** What settling the answer at `settledAt` would write; it writes nothing. */
export function planSettlement(
  { config, cleanedTurns, clients }: Pick<ConversationActorDeps, 'config' | 'cleanedTurns' | 'clients'>,
  { request, authenticated: { agent }, resolved, injected, relayed }: Publishing<EngramTurn>,
  settledAt: number,
): SettlementPlan {
  const { body, chain } = resolved;
  const { adapter } = request;
  const answered = relayed.outcome === 'completed' ? relayed.answer.response : undefined;
  const id = settledConversationId(resolved.conversationId, resolved.opening, relayed.outcome === 'completed' ? relayed.answer.turns : undefined);
  let link: NewLink | undefined;
  if (adapter.chain && answered) {
    link = {
      agentId: agent.id,
      owner: resolved.owner,
      // An answer with no assistant turn names nothing: its chain keeps to the opening.
      conversationId: id ?? resolved.opening,
      response: answered,
      input: adapter.messages(body).slice(chain?.history.length ?? 0),
      chain,
      store: adapter.chain.stored(body),
      now: settledAt,
    };
  }
  let compacted = false;
  let job: UnredactedJob | undefined;
  if (id !== undefined && relayed.outcome === 'completed' && relayed.final && agent.memory.extract && !resolved.chore) {
    const turns = [...adapter.transcript(body, instructionFiles(clients)), ...relayed.answer.turns];
    // The watermark as the request found it. A job that moved it since only makes this one
    // cover turns already done, which the consumer skips (it reads the watermark again).
    const pending = pendingTurns(injected.state, turns.length);
    compacted = pending.restarted;
    job = selectNewTurns({
      agentId: agent.id,
      orgId: agent.orgId,
      conversationId: id,
      protocol: adapter.id,
      model: adapter.model(body),
      turns,
      watermark: pending.from,
      maxBytes: config.extraction.maxBytes,
      settledAt,
      cleaned: cleanedTurns,
      instructions: adapter.instructions(body, instructionFiles(clients)),
      ...resolved.visible,
    });
  }
  return { conversationId: id, link, job, compacted };
}

/**
 * Settles the answer now: reads the clock, caches the Responses record on the connection
 * at once, and opens the turn's place in the retry queue, whose writes the settling steps
 * then make.
 */
export function openSettlement(
  deps: Pick<ConversationActorDeps, 'config' | 'cleanedTurns' | 'recordings' | 'now' | 'clients'>,
  input: Publishing<EngramTurn>,
): Settlement {
  const settledAt = deps.now();
  const { conversationId, link, job, compacted } = planSettlement(deps, input, settledAt);
  // In memory, at once: the connection's next request may continue it whatever the store says.
  if (link) cacheResponse(link, input.request.chainCache);
  const response = link?.store ? link : undefined;
  const turn = input.injected.state;
  const recorder = deps.recordings.begin({
    agentId: input.authenticated.agent.id,
    conversationId: conversationId ?? input.resolved.opening,
    bytes: () => jsonBytes(response) + jsonBytes(job) + jsonBytes(turn),
  });
  return { settledAt, conversationId, response, job, compacted, recorder };
}

/** What keeping `value` in memory costs, about: its JSON's length. */
function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
}
