/**
 * New and changed directory records (organisations, agents, tokens), built above the
 * directory port so every adapter stores the same record: ids and timestamps are chosen
 * here, not by the engine.
 */
import { newId } from './ids.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type AgentSecrets, type Org, type TokenRecord, type UpstreamOwner } from './types.js';

/** An agent's upstream as given: the extra headers with their values (sealed on the way in). */
export interface UpstreamInput {
  baseUrl: string;
  headers: Record<string, string>;
  /** Defaults to `service`. */
  responsesState?: Agent['upstream']['responsesState'];
  /** Who sets the base URL; defaults to `operator` (`UpstreamSettings.setBy`). */
  setBy?: UpstreamOwner;
}

export interface NewAgent {
  orgId: string;
  name: string;
  upstream: UpstreamInput;
  memory: Agent['memory'];
  secrets: Omit<AgentSecrets, 'upstreamHeaders'>;
}

export interface AgentPatch {
  name?: string;
  /** `headers`, when given, replace all extra headers. */
  upstream?: Partial<UpstreamInput>;
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
      headerNames: Object.keys(input.upstream.headers).sort(),
      responsesState: input.upstream.responsesState ?? 'service',
      setBy: input.upstream.setBy ?? 'operator',
    },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...input.memory },
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The agent with the patch's fields replaced (headers as a whole), stamped `now` (never
 * earlier than before). A new base URL is its setter's (`upstream.setBy`, the operator's
 * unless the patch says otherwise); a patch that leaves the URL keeps who set it.
 */
export function patchAgent(agent: Agent, patch: Omit<AgentPatch, 'secrets'>, now: number): Agent {
  return {
    ...agent,
    name: patch.name ?? agent.name,
    upstream: {
      baseUrl: patch.upstream?.baseUrl ?? agent.upstream.baseUrl,
      headerNames: patch.upstream?.headers ? Object.keys(patch.upstream.headers).sort() : agent.upstream.headerNames,
      responsesState: patch.upstream?.responsesState ?? agent.upstream.responsesState,
      setBy: patch.upstream?.baseUrl !== undefined ? (patch.upstream.setBy ?? 'operator') : agent.upstream.setBy,
      // Clear header values are never written back: the caller seals them (Control.updateAgent).
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
  // Before sealed headers, `upstream.headers` held the values in clear.
  const { headers: clear, ...upstream } = agent.upstream as Agent['upstream'] & { headers?: Record<string, string> };
  const clearHeaders = upstream.clearHeaders ?? (clear && Object.keys(clear).length > 0 ? clear : undefined);
  return {
    ...agent,
    upstream: {
      ...upstream,
      headerNames: upstream.headerNames ?? Object.keys(clear ?? {}).sort(),
      responsesState: upstream.responsesState ?? 'service',
      // Agents stored before it was kept read as the operator's (`UpstreamSettings.setBy`).
      setBy: upstream.setBy ?? 'operator',
      ...(clearHeaders ? { clearHeaders } : {}),
    },
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...agent.memory },
  };
}

/**
 * The secrets with the extra headers' values: sealed ones, or for an agent stored before
 * headers were sealed (not yet moved by `Control.sealClearHeaders`), the clear ones.
 */
export function withHeaderValues(agent: Agent, secrets: Omit<AgentSecrets, 'upstreamHeaders'> & Partial<AgentSecrets>): AgentSecrets {
  return { ...secrets, upstreamHeaders: secrets.upstreamHeaders ?? agent.upstream.clearHeaders ?? {} };
}
