/** The harness every control-store adapter family (SQLite, NATS KV) gives the contract suites. */
import { newAgent, newOrg, newToken } from '../../src/domain/directory-records.js';
import { DEFAULT_MEMORY_SETTINGS, type Agent, type Org, type TokenRecord } from '../../src/domain/types.js';
import type { AgentEntry, ControlStores } from '../../src/ports/index.js';

export interface ControlHarness {
  stores: ControlStores;
  /** Closes `stores` and opens the adapters again on the same data (a restart). */
  reopen?: () => Promise<ControlStores>;
  /** Another set of adapters on the same data, as a second replica has (closed by `cleanup`). */
  peer?: () => Promise<ControlStores>;
  cleanup: () => Promise<void>;
}

let clock = 1_700_000_000_000;
/** Strictly increasing timestamps, so ordering by creation time is well defined. */
export const tick = (): number => ++clock;

export function org(name: string): Org {
  return newOrg(name, tick());
}

/** An agent entry; the "sealed" secrets are opaque text to the directory. */
export function agentEntry(orgId: string, name: string, sealedSecrets = `sealed:${name}`): AgentEntry {
  const agent: Agent = newAgent(
    {
      orgId,
      name,
      upstream: { baseUrl: 'https://api.example.test', headers: { 'x-extra': 'yes' } },
      memory: { ...DEFAULT_MEMORY_SETTINGS, topK: 7 },
    },
    tick(),
  );
  return { agent, sealedSecrets };
}

export function token(agent: Agent, name = 't', prefix = 'egm_AbCd'): TokenRecord {
  return newToken(agent, prefix, name, tick());
}
