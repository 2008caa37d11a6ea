/**
 * New and changed directory records (organisations, agents, tokens), built above the
 * directory port so every adapter stores the same record: ids and timestamps are chosen
 * here, not by the engine.
 */
import { newId } from './ids.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type AgentSecrets, type Org, type TokenRecord } from './types.js';

export interface NewAgent {
  orgId: string;
  name: string;
  /** `responsesState` defaults to `service`. */
  upstream: Omit<Agent['upstream'], 'responsesState'> & Partial<Pick<Agent['upstream'], 'responsesState'>>;
  memory: Agent['memory'];
  secrets: AgentSecrets;
}

export interface AgentPatch {
  name?: string;
  upstream?: Partial<Agent['upstream']>;
  memory?: Partial<Agent['memory']>;
  secrets?: Partial<AgentSecrets>;
}

export function newOrg(name: string, now: number): Org {
  return { id: newId('org'), name, createdAt: now };
}

export function newAgent(input: Omit<NewAgent, 'secrets'>, now: number): Agent {
  return {
    id: newId('agt'),
    orgId: input.orgId,
    name: input.name,
    type: 'api_provider',
    upstream: {
      baseUrl: input.upstream.baseUrl,
      headers: { ...input.upstream.headers },
      responsesState: input.upstream.responsesState ?? 'service',
    },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...input.memory },
    createdAt: now,
    updatedAt: now,
  };
}

/** The agent with the patch's fields replaced (headers as a whole), stamped `now` (never earlier than before). */
export function patchAgent(agent: Agent, patch: Omit<AgentPatch, 'secrets'>, now: number): Agent {
  return {
    ...agent,
    name: patch.name ?? agent.name,
    upstream: {
      baseUrl: patch.upstream?.baseUrl ?? agent.upstream.baseUrl,
      headers: patch.upstream?.headers ? { ...patch.upstream.headers } : agent.upstream.headers,
      responsesState: patch.upstream?.responsesState ?? agent.upstream.responsesState,
    },
    memory: { ...agent.memory, ...patch.memory },
    updatedAt: Math.max(now, agent.updatedAt),
  };
}

/** Fields of the patch that are present replace the stored ones; the rest are kept. */
export function patchSecrets(current: AgentSecrets, patch: Partial<AgentSecrets>): AgentSecrets {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value;
  return merged as unknown as AgentSecrets;
}

export function newToken(agent: Pick<Agent, 'id' | 'orgId'>, prefix: string, name: string, now: number): TokenRecord {
  return { id: newId('tok'), agentId: agent.id, orgId: agent.orgId, name, prefix, createdAt: now, revokedAt: null, lastUsedAt: null };
}

/**
 * Agents written by older versions may lack settings added since: defaults fill them in.
 * Adapters pass every agent they read through this.
 */
export function withAgentDefaults(agent: Agent): Agent {
  return {
    ...agent,
    upstream: { ...agent.upstream, responsesState: agent.upstream.responsesState ?? 'service' },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...agent.memory },
  };
}
