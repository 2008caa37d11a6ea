import type { Publishing } from '../../../machines/conversation.machine.js';
import { publishJob } from '../../memory/watermark.js';
import type { ConversationActorDeps, EngramTurn, Published } from '../exchange.js';
import { openSettlement } from './settlement.js';

/**
 * Publishes a final answer's new turns for extraction, once the conversation has been
 * quiet for `settleMs`. It goes before the state write (the `recording` state), which
 * supersedes any older job of the conversation still waiting: a crash in between leaves
 * a job that still runs.
 */
export async function publish(
  deps: Pick<ConversationActorDeps, 'bus' | 'config' | 'cleanedTurns' | 'recordings' | 'now'>,
  input: Publishing<EngramTurn>,
): Promise<Published> {
  const settlement = openSettlement(deps, input);
  const { job } = settlement;
  if (!job) return { job: 'none', settlement };
  const written = await settlement.recorder.write([
    { name: 'job', run: (retry) => publishJob(deps.bus, job, deps.config.settleMs, { supersede: !retry }) },
  ]);
  return { job: written === 'written' ? 'published' : written === 'kept' ? 'deferred' : 'lost', settlement };
}
