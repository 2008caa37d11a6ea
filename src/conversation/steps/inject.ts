import type { Injecting } from '../../../machines/conversation.machine.js';
import type { InjectedReflection } from '../../ports/index.js';
import { renderReflectionsBlock } from '../../memory/retrieval.js';
import type { ConversationActorDeps, EngramTurn, Injected, InjectedMemory } from '../exchange.js';
import { forwardedBody, newInsertion, planInjection } from '../injection.js';
import { checkKeptBlocks } from '../kept-blocks.js';
import { detectMemoryTools, type MemoryTools } from '../memory-tools.js';
import { injectedReflection, nearMiss } from '../request-log.js';
import { indexBlock, memoryNudge } from './memory-nudge.js';

/**
 * Retrieval and prompt-cache-safe placement: the blocks earlier turns added, re-applied
 * while still true; the reflections relevant to the new input; the index or a reminder
 * when the client has Engram's tools. `signal` fires when the client goes away.
 */
export async function inject(
  deps: Pick<ConversationActorDeps, 'config' | 'control' | 'reflections' | 'retrieval' | 'now' | 'clients'>,
  { request, authenticated, resolved }: Injecting<EngramTurn>,
  signal: AbortSignal,
): Promise<Injected> {
  const { config } = deps;
  const { agent } = authenticated;
  const { body, state, forward, visible } = resolved;
  const { adapter } = request;
  const messages = adapter.messages(body);
  const plan = planInjection(adapter, messages, state);
  const turn = (state.turns ?? 0) + 1;
  // Memories the new messages already show (a recall result) count as held: never injected beside them, nor later.
  const injectedIds = new Set([...state.injectedIds, ...plan.shown]);
  // Engram's tools as the client offers them: read only when an index or a reminder is at stake.
  let offered: { tools: MemoryTools | undefined } | undefined;
  const memoryTools = () => (offered ??= { tools: detectMemoryTools(adapter.offeredTools(body), config.mcp.serverNames, deps.clients) }).tools;
  // What earlier turns added, re-applied only while it is true.
  const checked = await checkKeptBlocks(plan.kept, {
    agentId: agent.id,
    visible,
    reflections: deps.reflections,
    held: injectedIds,
    rebuildIndex: async (stale) => {
      const tools = memoryTools();
      return tools && { ...stale, ...(await indexBlock(deps, agent.id, visible, tools)) };
    },
  });
  const insertions = checked.insertions.slice();
  for (const id of checked.added) injectedIds.add(id);
  const memory: InjectedMemory = { kept: checked.kept, rebuilt: checked.rebuilt, reason: null, bar: null, nearMisses: [] };
  let reflections: InjectedReflection[] = [];
  const injecting = agent.memory.inject && !resolved.chore;
  if (!injecting) memory.reason = resolved.chore ? 'client_chore' : 'injection_off';
  else if (plan.carrier < 0) memory.reason = 'no_new_input';
  else if (plan.target < 0) memory.reason = 'nothing_to_search';
  else {
    const decision = await deps.retrieval.decide(agent, plan.query, injectedIds, visible, signal);
    const found = decision.taken.map((candidate) => candidate.reflection);
    memory.bar = agent.memory.minScore;
    if (found.length > 0) {
      const ids = found.map((reflection) => reflection.id);
      insertions.push({ ...newInsertion(messages, plan.target, renderReflectionsBlock(found), 'reflections'), reflections: ids, turn });
      for (const id of ids) injectedIds.add(id);
      reflections = decision.taken.map(injectedReflection);
    } else {
      memory.reason = decision.reason ?? 'no_candidates';
      memory.nearMisses = decision.nearMisses.map(nearMiss);
    }
  }
  const tools = plan.carrier >= 0 && injecting ? memoryTools() : undefined;
  if (tools) {
    const nudge = await memoryNudge(deps, { adapter, raw: forward.raw, messages, carrier: plan.carrier, insertions, agentId: agent.id, visible, tools });
    if (nudge) insertions.push({ ...nudge, turn });
  }
  const nextState = { ...state, insertions, injectedIds: [...injectedIds], seenMessages: messages.length, turns: turn };
  const forwardBody = forwardedBody(adapter, forward, messages, insertions);
  return { forwardBody, injected: reflections.length, reflections, memory, state: nextState };
}
