/** Writes a deployment's archive (`format.ts`), agent by agent, without holding it in memory. */
import type { Control } from '../control/control.js';
import type { AccountStore, ReflectionStore } from '../ports/index.js';
import type { Vault } from '../security/vault.js';
import { ENGRAM_VERSION } from '../version.js';
import { ARCHIVE_FORMAT, ARCHIVE_VERSION, encodeVector, passwordContext, type ArchiveHeader, type ArchiveRecord } from './format.js';

export interface ExportSources {
  control: Control;
  reflections: ReflectionStore;
  accounts: AccountStore;
  /** Seals each user's password hash, with the key that seals the agents' upstream keys. */
  vault: Pick<Vault, 'seal'>;
  engines: ArchiveHeader['source'];
}

export interface ArchiveCounts {
  orgs: number;
  agents: number;
  tokens: number;
  reflections: number;
  users: number;
  /** OAuth clients. */
  clients: number;
}

export const noCounts = (): ArchiveCounts => ({ orgs: 0, agents: 0, tokens: 0, reflections: 0, users: 0, clients: 0 });

const PAGE = 500;

/** Calls `write` with each line (no newline), header first; returns what it wrote. */
export async function exportArchive(sources: ExportSources, write: (line: string) => Promise<void> | void, now = new Date()): Promise<ArchiveCounts> {
  const counts = noCounts();
  const header: ArchiveHeader = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    created_at: now.toISOString(),
    engram: ENGRAM_VERSION,
    source: sources.engines,
  };
  await write(JSON.stringify(header));
  const emit = (record: ArchiveRecord) => write(JSON.stringify(record));
  const { directory } = sources.control;
  for (const org of await directory.listOrgs()) {
    await emit({ type: 'org', org });
    counts.orgs++;
    for (const agent of await directory.listAgents(org.id)) {
      const entry = await directory.agentEntry(agent.id);
      if (!entry) continue; // deleted while exporting
      await emit({ type: 'agent', agent: entry.agent, sealed_secrets: entry.sealedSecrets });
      counts.agents++;
      const hashes = await directory.tokenHashes(agent.id);
      for (const token of await directory.listTokens(agent.id)) {
        const hash = hashes.get(token.id);
        if (hash === undefined) continue;
        await emit({ type: 'token', token, hash });
        counts.tokens++;
      }
      for (let offset = 0; ; offset += PAGE) {
        const page = await sources.reflections.list(agent.id, { limit: PAGE, offset });
        const vectors = await sources.reflections.vectors(agent.id, page.map((r) => r.id));
        for (const reflection of page) {
          const vector = vectors.get(reflection.id);
          if (!vector) continue;
          await emit({ type: 'reflection', reflection, vector: encodeVector(vector) });
          counts.reflections++;
        }
        if (page.length < PAGE) break;
      }
      const markdown = await sources.control.indexes.get(agent.id);
      if (markdown !== undefined) await emit({ type: 'index', agent_id: agent.id, markdown });
    }
  }
  // After every org: a user's memberships name them.
  for (const { passwordHash, ...user } of await sources.accounts.listUsers()) {
    await emit({ type: 'user', user, sealed_password: sources.vault.seal(passwordHash, passwordContext(user.id)) });
    counts.users++;
  }
  for (const client of await sources.accounts.listClients()) {
    await emit({ type: 'oauth_client', client });
    counts.clients++;
  }
  return counts;
}
