/**
 * The directory (orgs, agents, tokens) in the embedded SQLite file. Agents' upstream
 * secrets arrive sealed and are stored as given; tokens are stored as hashes only.
 */
import { withAgentDefaults } from '../../domain/directory-records.js';
import type { Agent, Org, TokenRecord } from '../../domain/types.js';
import { EngramError } from '../../errors.js';
import type { AgentEntry, Directory, TokenLookup } from '../../ports/directory.js';
import type { SqliteDatabase } from './database.js';
import { conflictOr, isSqliteError } from './sqlite-errors.js';

interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  upstream: string;
  memory: string;
  created_at: number;
  updated_at: number;
}

type TokenAgentRow = TokenRecord & Pick<AgentRow, 'upstream' | 'memory' | 'created_at' | 'updated_at'> & { agent_name: string };

export interface SqliteDirectoryOptions {
  now?: () => number;
  /** `lastUsedAt` is written at most this often per token, so the lookup on every request stays a read. */
  lastUsedResolutionMs?: number;
}

const AGENT_COLUMNS = 'id, org_id, name, upstream, memory, created_at, updated_at';
/** Orgs and tokens are read named as their records, in their order: the row is the record. */
const ORG_COLUMNS = 'id, name, created_at AS createdAt';
const TOKEN_COLUMNS =
  'id, agent_id AS agentId, org_id AS orgId, name, prefix, created_at AS createdAt, revoked_at AS revokedAt, last_used_at AS lastUsedAt';
/** Tokens (and agent entries) kept at most (all of them are forgotten when it is reached). */
const FOUND_MAX = 10_000;

/** An agent shared by the requests of its tokens: nobody may change it under the others. */
function freezeAgent(agent: Agent): Agent {
  const freeze = (value: unknown): void => {
    if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
    for (const inner of Object.values(value)) freeze(inner);
    Object.freeze(value);
  };
  freeze(agent);
  return agent;
}

export class SqliteDirectory implements Directory {
  readonly #db: SqliteDatabase;
  readonly #now: () => number;
  readonly #lastUsedResolutionMs: number;
  /** Live tokens found, by hash, until the directory next changes (`findToken`). */
  readonly #found = new Map<string, TokenLookup>();
  /** Agent entries read, by agent id, until the directory next changes (`agentEntry`). */
  readonly #entries = new Map<string, AgentEntry>();
  readonly #sql;

  constructor(db: SqliteDatabase, options: SqliteDirectoryOptions = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
    this.#lastUsedResolutionMs = options.lastUsedResolutionMs ?? 60_000;
    this.#sql = {
      insertOrg: db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)'),
      orgByIdOrName: db.prepare<[string, string, string], Org>(
        `SELECT ${ORG_COLUMNS} FROM orgs WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1`,
      ),
      listOrgs: db.prepare<[], Org>(`SELECT ${ORG_COLUMNS} FROM orgs ORDER BY created_at, id`),
      agentIdsOfOrg: db.prepare<[string], string>('SELECT id FROM agents WHERE org_id = ?').pluck(),
      deleteOrgTokens: db.prepare('DELETE FROM tokens WHERE agent_id IN (SELECT id FROM agents WHERE org_id = ?)'),
      deleteOrgAgents: db.prepare('DELETE FROM agents WHERE org_id = ?'),
      deleteOrg: db.prepare('DELETE FROM orgs WHERE id = ?'),

      insertAgent: db.prepare(
        `INSERT INTO agents (id, org_id, name, type, upstream, memory, secrets, created_at, updated_at)
         VALUES (?, ?, ?, 'api_provider', ?, ?, ?, ?, ?)`,
      ),
      agentByIdOrName: db.prepare<[string, string, string, string], AgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM agents WHERE org_id = ? AND (id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1`,
      ),
      agentEntry: db.prepare<[string], AgentRow & { secrets: string }>(`SELECT ${AGENT_COLUMNS}, secrets FROM agents WHERE id = ?`),
      listAgents: db.prepare<[string], AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE org_id = ? ORDER BY created_at, id`),
      updateAgent: db.prepare('UPDATE agents SET name = ?, upstream = ?, memory = ?, secrets = ?, updated_at = ? WHERE id = ?'),
      deleteAgentTokens: db.prepare('DELETE FROM tokens WHERE agent_id = ?'),
      deleteAgent: db.prepare('DELETE FROM agents WHERE org_id = ? AND id = ?'),

      insertToken: db.prepare(
        'INSERT INTO tokens (id, agent_id, org_id, name, prefix, hash, created_at, revoked_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      // The hot path: one lookup through the unique index on hash, agent joined in.
      findToken: db.prepare<[string], TokenAgentRow>(
        `SELECT t.id, t.agent_id AS agentId, t.org_id AS orgId, t.name, t.prefix, t.created_at AS createdAt,
                t.revoked_at AS revokedAt, t.last_used_at AS lastUsedAt,
                a.name AS agent_name, a.upstream, a.memory, a.created_at, a.updated_at
         FROM tokens t JOIN agents a ON a.id = t.agent_id
         WHERE t.hash = ? AND t.revoked_at IS NULL`,
      ),
      revokedToken: db.prepare<[string], TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE hash = ? AND revoked_at IS NOT NULL`),
      tokenHashes: db.prepare<[string], { id: string; hash: string }>('SELECT id, hash FROM tokens WHERE agent_id = ?'),
      touchToken: db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?'),
      listTokens: db.prepare<[string], TokenRecord>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE agent_id = ? ORDER BY created_at, id`),
      revokeToken: db.prepare('UPDATE tokens SET revoked_at = ? WHERE agent_id = ? AND id = ? AND revoked_at IS NULL'),
    };
  }

  async createOrg(org: Org): Promise<void> {
    try {
      this.#sql.insertOrg.run(org.id, org.name, org.createdAt);
    } catch (error) {
      throw conflictOr(error, `An organisation named "${org.name}" already exists`);
    }
  }

  async getOrg(idOrName: string): Promise<Org | undefined> {
    return this.#sql.orgByIdOrName.get(idOrName, idOrName, idOrName);
  }

  async listOrgs(): Promise<Org[]> {
    return this.#sql.listOrgs.all();
  }

  async deleteOrg(id: string): Promise<string[] | undefined> {
    this.#forget();
    return this.#db.transaction(() => {
      const agentIds = this.#sql.agentIdsOfOrg.all(id);
      this.#sql.deleteOrgTokens.run(id);
      this.#sql.deleteOrgAgents.run(id);
      return this.#sql.deleteOrg.run(id).changes > 0 ? agentIds : undefined;
    })();
  }

  async createAgent({ agent, sealedSecrets }: AgentEntry): Promise<void> {
    try {
      this.#sql.insertAgent.run(
        agent.id,
        agent.orgId,
        agent.name,
        JSON.stringify(agent.upstream),
        JSON.stringify(agent.memory),
        sealedSecrets,
        agent.createdAt,
        agent.updatedAt,
      );
    } catch (error) {
      if (isSqliteError(error, 'SQLITE_CONSTRAINT_FOREIGNKEY')) {
        throw new EngramError('not_found', `No organisation with id "${agent.orgId}"`);
      }
      throw conflictOr(error, `An agent named "${agent.name}" already exists in this organisation`);
    }
  }

  async getAgent(orgId: string, idOrName: string): Promise<Agent | undefined> {
    const row = this.#sql.agentByIdOrName.get(orgId, idOrName, idOrName, idOrName);
    return row && toAgent(row);
  }

  /** Read on every proxied request (its upstream secrets): kept, as `findToken`'s are, until the directory next changes. */
  async agentEntry(agentId: string): Promise<AgentEntry | undefined> {
    const known = this.#entries.get(agentId);
    if (known) return known;
    const row = this.#sql.agentEntry.get(agentId);
    if (!row) return undefined;
    const entry: AgentEntry = Object.freeze({ agent: freezeAgent(toAgent(row)), sealedSecrets: row.secrets });
    if (this.#entries.size >= FOUND_MAX) this.#entries.clear();
    this.#entries.set(agentId, entry);
    return entry;
  }

  async listAgents(orgId: string): Promise<Agent[]> {
    return this.#sql.listAgents.all(orgId).map(toAgent);
  }

  async updateAgent(orgId: string, agentId: string, change: (current: AgentEntry) => AgentEntry): Promise<Agent | undefined> {
    this.#forget();
    // One transaction: no other writer comes between the read and the write.
    return this.#db.transaction(() => {
      const row = this.#sql.agentEntry.get(agentId);
      if (!row || row.org_id !== orgId) return undefined;
      const { agent, sealedSecrets } = change({ agent: toAgent(row), sealedSecrets: row.secrets });
      try {
        this.#sql.updateAgent.run(agent.name, JSON.stringify(agent.upstream), JSON.stringify(agent.memory), sealedSecrets, agent.updatedAt, agentId);
      } catch (error) {
        throw conflictOr(error, `An agent named "${agent.name}" already exists in this organisation`);
      }
      return agent;
    }).immediate();
  }

  async deleteAgent(orgId: string, agentId: string): Promise<boolean> {
    this.#forget();
    return this.#db.transaction(() => {
      const row = this.#sql.agentEntry.get(agentId);
      if (!row || row.org_id !== orgId) return false;
      this.#sql.deleteAgentTokens.run(agentId);
      return this.#sql.deleteAgent.run(orgId, agentId).changes > 0;
    })();
  }

  async createToken(token: TokenRecord, tokenHash: string): Promise<void> {
    const agent = this.#sql.agentEntry.get(token.agentId);
    if (!agent) throw new EngramError('not_found', `No agent with id "${token.agentId}"`);
    try {
      this.#sql.insertToken.run(
        token.id,
        token.agentId,
        agent.org_id,
        token.name,
        token.prefix,
        tokenHash,
        token.createdAt,
        token.revokedAt,
        token.lastUsedAt,
      );
    } catch (error) {
      throw conflictOr(error, 'A token with this hash already exists');
    }
  }

  /**
   * Every proxied request's first question. Live tokens found are kept with their agent
   * (read-only: frozen) until the directory next changes; this handle is the file's only
   * writer (the data-dir lock), so nothing else can change them.
   */
  async findToken(tokenHash: string): Promise<TokenLookup | undefined> {
    let found = this.#found.get(tokenHash);
    if (!found) {
      const row = this.#sql.findToken.get(tokenHash);
      if (!row) return undefined;
      const { agent_name: name, upstream, memory, created_at, updated_at, ...token } = row;
      const agent = toAgent({ id: token.agentId, org_id: token.orgId, name, upstream, memory, created_at, updated_at });
      found = { token, agent: freezeAgent(agent) };
      if (this.#found.size >= FOUND_MAX) this.#found.clear();
      this.#found.set(tokenHash, found);
    }
    const token = { ...found.token };
    const now = this.#now();
    if (token.lastUsedAt === null || now - token.lastUsedAt >= this.#lastUsedResolutionMs) {
      try {
        this.#sql.touchToken.run(now, token.id);
        token.lastUsedAt = now;
        found.token = token;
      } catch {
        // When the token was last used is a hint, not worth refusing a request over (a
        // full disk, a busy file): the answer goes out, and the next use tries again.
      }
    }
    return { token: { ...token }, agent: found.agent };
  }

  async revokedToken(tokenHash: string): Promise<TokenRecord | undefined> {
    return this.#sql.revokedToken.get(tokenHash);
  }

  async listTokens(agentId: string): Promise<TokenRecord[]> {
    return this.#sql.listTokens.all(agentId);
  }

  async tokenHashes(agentId: string): Promise<Map<string, string>> {
    return new Map(this.#sql.tokenHashes.all(agentId).map((row) => [row.id, row.hash]));
  }

  async revokeToken(agentId: string, tokenId: string, at: number): Promise<boolean> {
    this.#forget();
    return this.#sql.revokeToken.run(at, agentId, tokenId).changes > 0;
  }

  /** Every write to orgs, agents or tokens: nothing kept from before it is served again. */
  #forget(): void {
    this.#found.clear();
    this.#entries.clear();
  }

  /** Does not close the shared database handle; its opener does (see database.ts). */
  async close(): Promise<void> {}
}

function toAgent(row: AgentRow): Agent {
  return withAgentDefaults({
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    type: 'api_provider',
    upstream: JSON.parse(row.upstream) as Agent['upstream'],
    memory: JSON.parse(row.memory) as Agent['memory'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}
