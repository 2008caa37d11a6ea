/**
 * Control store in the embedded SQLite file: orgs, agents, tokens, conversation state
 * and root indexes. Upstream keys are sealed with the SecretBox (bound to the agent id);
 * tokens are stored as hashes only.
 */
import type { ConversationState } from '../../domain/conversation-state.js';
import type { ResponseRecord } from '../../domain/response-record.js';
import { DEFAULT_MEMORY_SETTINGS } from '../../domain/types.js';
import type { Agent, AgentSecrets, Org, TokenRecord } from '../../domain/types.js';
import { EngramError } from '../../errors.js';
import type { AgentPatch, ControlStore, NewAgent, TokenLookup } from '../../memory/ports.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { SqliteDatabase } from './database.js';
import { newId } from '../../domain/ids.js';
import { SqliteResponseRecords } from './response-records.js';

interface OrgRow {
  id: string;
  name: string;
  created_at: number;
}

interface AgentRow {
  id: string;
  org_id: string;
  name: string;
  upstream: string;
  memory: string;
  created_at: number;
  updated_at: number;
}

interface TokenRow {
  id: string;
  agent_id: string;
  org_id: string;
  name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
  last_used_at: number | null;
}

type TokenAgentRow = TokenRow & { a_name: string; a_upstream: string; a_memory: string; a_created_at: number; a_updated_at: number };

export interface SqliteControlStoreOptions {
  now?: () => number;
  /**
   * `lastUsedAt` is written at most this often per token, so the lookup on every
   * proxied request stays a read in the common case.
   */
  lastUsedResolutionMs?: number;
}

const OPENED_SECRETS_MAX = 10_000;

const AGENT_COLUMNS = 'id, org_id, name, upstream, memory, created_at, updated_at';
const TOKEN_COLUMNS = 'id, agent_id, org_id, name, prefix, created_at, revoked_at, last_used_at';

export class SqliteControlStore implements ControlStore {
  readonly #db: SqliteDatabase;
  readonly #box: SecretBox;
  readonly #now: () => number;
  readonly #lastUsedResolutionMs: number;
  readonly #sql;
  readonly #responses: SqliteResponseRecords;
  /** Decrypted upstream keys by agent, with the ciphertext they came from (in memory only). */
  readonly #opened = new Map<string, { sealed: string; secrets: AgentSecrets }>();

  constructor(db: SqliteDatabase, box: SecretBox, options: SqliteControlStoreOptions = {}) {
    this.#db = db;
    this.#box = box;
    this.#now = options.now ?? Date.now;
    this.#lastUsedResolutionMs = options.lastUsedResolutionMs ?? 60_000;
    this.#responses = new SqliteResponseRecords(db, box);
    const agentIdsOfOrg = 'SELECT id FROM agents WHERE org_id = ?';
    this.#sql = {
      insertOrg: db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (?, ?, ?)'),
      orgByIdOrName: db.prepare<[string, string, string], OrgRow>(
        'SELECT id, name, created_at FROM orgs WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1',
      ),
      listOrgs: db.prepare<[], OrgRow>('SELECT id, name, created_at FROM orgs ORDER BY created_at, id'),
      deleteOrgTokens: db.prepare(`DELETE FROM tokens WHERE agent_id IN (${agentIdsOfOrg})`),
      deleteOrgConversations: db.prepare(`DELETE FROM conversations WHERE agent_id IN (${agentIdsOfOrg})`),
      deleteOrgIndexes: db.prepare(`DELETE FROM agent_indexes WHERE agent_id IN (${agentIdsOfOrg})`),
      deleteOrgAgents: db.prepare('DELETE FROM agents WHERE org_id = ?'),
      deleteOrg: db.prepare('DELETE FROM orgs WHERE id = ?'),

      insertAgent: db.prepare(
        `INSERT INTO agents (id, org_id, name, type, upstream, memory, secrets, created_at, updated_at)
         VALUES (?, ?, ?, 'api_provider', ?, ?, ?, ?, ?)`,
      ),
      agentByIdOrName: db.prepare<[string, string, string, string], AgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM agents WHERE org_id = ? AND (id = ? OR name = ?) ORDER BY id = ? DESC LIMIT 1`,
      ),
      agentById: db.prepare<[string], AgentRow>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE id = ?`),
      listAgents: db.prepare<[string], AgentRow>(
        `SELECT ${AGENT_COLUMNS} FROM agents WHERE org_id = ? ORDER BY created_at, id`,
      ),
      agentSecrets: db.prepare<[string], { secrets: string }>('SELECT secrets FROM agents WHERE id = ?'),
      updateAgent: db.prepare(
        'UPDATE agents SET name = ?, upstream = ?, memory = ?, secrets = ?, updated_at = ? WHERE id = ?',
      ),
      deleteAgentTokens: db.prepare('DELETE FROM tokens WHERE agent_id = ?'),
      deleteAgentConversations: db.prepare('DELETE FROM conversations WHERE agent_id = ?'),
      pruneConversations: db.prepare('DELETE FROM conversations WHERE updated_at < ?'),
      deleteAgentIndex: db.prepare('DELETE FROM agent_indexes WHERE agent_id = ?'),
      deleteAgent: db.prepare('DELETE FROM agents WHERE org_id = ? AND id = ?'),

      insertToken: db.prepare(
        `INSERT INTO tokens (id, agent_id, org_id, name, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      // The hot path: one lookup through the unique index on hash, agent joined in.
      findToken: db.prepare<[string], TokenAgentRow>(
        `SELECT t.id, t.agent_id, t.org_id, t.name, t.prefix, t.created_at, t.revoked_at, t.last_used_at,
                a.name AS a_name, a.upstream AS a_upstream, a.memory AS a_memory,
                a.created_at AS a_created_at, a.updated_at AS a_updated_at
         FROM tokens t JOIN agents a ON a.id = t.agent_id
         WHERE t.hash = ? AND t.revoked_at IS NULL`,
      ),
      touchToken: db.prepare('UPDATE tokens SET last_used_at = ? WHERE id = ?'),
      listTokens: db.prepare<[string], TokenRow>(
        `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE agent_id = ? ORDER BY created_at, id`,
      ),
      revokeToken: db.prepare(
        'UPDATE tokens SET revoked_at = ? WHERE agent_id = ? AND id = ? AND revoked_at IS NULL',
      ),

      // On every proxied request: one lookup through the (agent_id, id) index each, and
      // the state is read as a bare string (pluck), without a row object.
      getConversation: db
        .prepare<[string, string], string>('SELECT state FROM conversations WHERE agent_id = ? AND id = ?')
        .pluck(),
      putConversation: db.prepare(
        `INSERT INTO conversations (agent_id, id, state, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (agent_id, id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      ),
      // A range over the (agent_id, id) index: ids from the prefix up to the prefix followed by the highest code point.
      hasConversation: db
        .prepare<[string, string, string], number>('SELECT 1 FROM conversations WHERE agent_id = ? AND id >= ? AND id < ? LIMIT 1')
        .pluck(),
      getIndex: db.prepare<[string], { markdown: string }>('SELECT markdown FROM agent_indexes WHERE agent_id = ?'),
      putIndex: db.prepare(
        `INSERT INTO agent_indexes (agent_id, markdown, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (agent_id) DO UPDATE SET markdown = excluded.markdown, updated_at = excluded.updated_at`,
      ),
    };
  }

  async createOrg(name: string): Promise<Org> {
    const org: Org = { id: newId('org'), name, createdAt: this.#now() };
    try {
      this.#sql.insertOrg.run(org.id, org.name, org.createdAt);
    } catch (error) {
      throw conflictOr(error, `An organisation named "${name}" already exists`);
    }
    return org;
  }

  async getOrg(idOrName: string): Promise<Org | undefined> {
    const row = this.#sql.orgByIdOrName.get(idOrName, idOrName, idOrName);
    return row && toOrg(row);
  }

  async listOrgs(): Promise<Org[]> {
    return this.#sql.listOrgs.all().map(toOrg);
  }

  async deleteOrg(id: string): Promise<boolean> {
    return this.#db.transaction(() => {
      this.#sql.deleteOrgTokens.run(id);
      this.#sql.deleteOrgConversations.run(id);
      this.#sql.deleteOrgIndexes.run(id);
      this.#responses.deleteOrg(id);
      this.#sql.deleteOrgAgents.run(id);
      return this.#sql.deleteOrg.run(id).changes > 0;
    })();
  }

  async createAgent(input: NewAgent): Promise<Agent> {
    const now = this.#now();
    const agent: Agent = {
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
    try {
      this.#sql.insertAgent.run(
        agent.id,
        agent.orgId,
        agent.name,
        JSON.stringify(agent.upstream),
        JSON.stringify(agent.memory),
        this.#seal(agent.id, input.secrets),
        now,
        now,
      );
    } catch (error) {
      if (isSqliteError(error, 'SQLITE_CONSTRAINT_FOREIGNKEY')) {
        throw new EngramError('not_found', `No organisation with id "${input.orgId}"`);
      }
      throw conflictOr(error, `An agent named "${input.name}" already exists in this organisation`);
    }
    return agent;
  }

  async getAgent(orgId: string, idOrName: string): Promise<Agent | undefined> {
    const row = this.#sql.agentByIdOrName.get(orgId, idOrName, idOrName, idOrName);
    return row && toAgent(row);
  }

  async listAgents(orgId: string): Promise<Agent[]> {
    return this.#sql.listAgents.all(orgId).map(toAgent);
  }

  async updateAgent(orgId: string, agentId: string, patch: AgentPatch): Promise<Agent | undefined> {
    return this.#db.transaction(() => {
      const row = this.#sql.agentById.get(agentId);
      if (!row || row.org_id !== orgId) return undefined;
      const current = toAgent(row);
      const secrets = patch.secrets ? mergeSecrets(this.#open(agentId), patch.secrets) : undefined;
      const updated: Agent = {
        ...current,
        name: patch.name ?? current.name,
        upstream: {
          baseUrl: patch.upstream?.baseUrl ?? current.upstream.baseUrl,
          headers: patch.upstream?.headers ? { ...patch.upstream.headers } : current.upstream.headers,
          responsesState: patch.upstream?.responsesState ?? current.upstream.responsesState,
        },
        memory: { ...current.memory, ...patch.memory },
        updatedAt: Math.max(this.#now(), current.updatedAt),
      };
      try {
        this.#sql.updateAgent.run(
          updated.name,
          JSON.stringify(updated.upstream),
          JSON.stringify(updated.memory),
          secrets ? this.#seal(agentId, secrets) : this.#sealedSecrets(agentId),
          updated.updatedAt,
          agentId,
        );
      } catch (error) {
        throw conflictOr(error, `An agent named "${updated.name}" already exists in this organisation`);
      }
      return updated;
    })();
  }

  async deleteAgent(orgId: string, agentId: string): Promise<boolean> {
    return this.#db.transaction(() => {
      const row = this.#sql.agentById.get(agentId);
      if (!row || row.org_id !== orgId) return false;
      this.#sql.deleteAgentTokens.run(agentId);
      this.#sql.deleteAgentConversations.run(agentId);
      this.#sql.deleteAgentIndex.run(agentId);
      this.#responses.deleteAgent(agentId);
      return this.#sql.deleteAgent.run(orgId, agentId).changes > 0;
    })();
  }

  async getAgentSecrets(agentId: string): Promise<AgentSecrets | undefined> {
    return this.#open(agentId);
  }

  async createToken(agentId: string, tokenHash: string, prefix: string, name: string): Promise<TokenRecord> {
    const agent = this.#sql.agentById.get(agentId);
    if (!agent) throw new EngramError('not_found', `No agent with id "${agentId}"`);
    const record: TokenRecord = {
      id: newId('tok'),
      agentId,
      orgId: agent.org_id,
      name,
      prefix,
      createdAt: this.#now(),
      revokedAt: null,
      lastUsedAt: null,
    };
    try {
      this.#sql.insertToken.run(record.id, agentId, record.orgId, name, prefix, tokenHash, record.createdAt);
    } catch (error) {
      throw conflictOr(error, 'A token with this hash already exists');
    }
    return record;
  }

  async findToken(tokenHash: string): Promise<TokenLookup | undefined> {
    const row = this.#sql.findToken.get(tokenHash);
    if (!row) return undefined;
    const token = toToken(row);
    const now = this.#now();
    if (token.lastUsedAt === null || now - token.lastUsedAt >= this.#lastUsedResolutionMs) {
      this.#sql.touchToken.run(now, token.id);
      token.lastUsedAt = now;
    }
    const agent = toAgent({
      id: row.agent_id,
      org_id: row.org_id,
      name: row.a_name,
      upstream: row.a_upstream,
      memory: row.a_memory,
      created_at: row.a_created_at,
      updated_at: row.a_updated_at,
    });
    return { token, agent };
  }

  async listTokens(agentId: string): Promise<TokenRecord[]> {
    return this.#sql.listTokens.all(agentId).map(toToken);
  }

  async revokeToken(agentId: string, tokenId: string): Promise<boolean> {
    return this.#sql.revokeToken.run(this.#now(), agentId, tokenId).changes > 0;
  }

  async getConversation(agentId: string, conversationId: string): Promise<ConversationState | undefined> {
    const state = this.#sql.getConversation.get(agentId, conversationId);
    return state === undefined ? undefined : (JSON.parse(state) as ConversationState);
  }

  async putConversation(state: ConversationState): Promise<void> {
    this.#sql.putConversation.run(state.agentId, state.id, JSON.stringify(state), state.lastActivityAt);
  }

  async hasConversation(agentId: string, idPrefix: string): Promise<boolean> {
    return this.#sql.hasConversation.get(agentId, idPrefix, idPrefix + '\u{10ffff}') !== undefined;
  }

  async pruneConversations(idleSince: number): Promise<number> {
    return this.#sql.pruneConversations.run(idleSince).changes;
  }

  async putResponse(record: ResponseRecord): Promise<void> {
    this.#responses.put(record);
  }

  async getResponse(agentId: string, id: string): Promise<ResponseRecord | undefined> {
    return this.#responses.get(agentId, id);
  }

  async deleteResponse(agentId: string, id: string): Promise<boolean> {
    return this.#responses.delete(agentId, id);
  }

  async pruneResponses(createdBefore: number): Promise<number> {
    return this.#responses.prune(createdBefore);
  }

  async getIndex(agentId: string): Promise<string | undefined> {
    return this.#sql.getIndex.get(agentId)?.markdown;
  }

  async putIndex(agentId: string, markdown: string): Promise<void> {
    this.#sql.putIndex.run(agentId, markdown, this.#now());
  }

  /** Does not close the shared database handle; its opener does (see database.ts). */
  async close(): Promise<void> {}

  #seal(agentId: string, secrets: AgentSecrets): string {
    return this.#box.encrypt(JSON.stringify(secrets), agentId);
  }

  #sealedSecrets(agentId: string): string {
    const row = this.#sql.agentSecrets.get(agentId);
    if (!row) throw new EngramError('not_found', `No agent with id "${agentId}"`);
    return row.secrets;
  }

  #open(agentId: string): AgentSecrets | undefined {
    const row = this.#sql.agentSecrets.get(agentId);
    if (!row) return undefined;
    // Every proxied request needs the key: decrypt once per sealed value, not per request.
    const cached = this.#opened.get(agentId);
    if (cached?.sealed === row.secrets) return cached.secrets;
    const secrets = JSON.parse(this.#box.decrypt(row.secrets, agentId)) as AgentSecrets;
    if (this.#opened.size >= OPENED_SECRETS_MAX) this.#opened.clear();
    this.#opened.set(agentId, { sealed: row.secrets, secrets });
    return secrets;
  }
}

/** Fields of the patch that are present replace the stored ones; the rest are kept. */
function mergeSecrets(current: AgentSecrets | undefined, patch: Partial<AgentSecrets>): AgentSecrets {
  const merged: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) if (value !== undefined) merged[key] = value;
  return merged as unknown as AgentSecrets;
}

function toOrg(row: OrgRow): Org {
  return { id: row.id, name: row.name, createdAt: row.created_at };
}

function toAgent(row: AgentRow): Agent {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    type: 'api_provider',
    // Rows written before a setting existed get its default.
    upstream: { responsesState: 'service', ...(JSON.parse(row.upstream) as Partial<Agent['upstream']>) } as Agent['upstream'],
    // Defaults first: settings added in later versions get their default on old rows.
    memory: { ...DEFAULT_MEMORY_SETTINGS, ...(JSON.parse(row.memory) as Partial<Agent['memory']>) },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toToken(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    orgId: row.org_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    lastUsedAt: row.last_used_at,
  };
}

function isSqliteError(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

function conflictOr(error: unknown, message: string): unknown {
  return isSqliteError(error, 'SQLITE_CONSTRAINT_UNIQUE') || isSqliteError(error, 'SQLITE_CONSTRAINT_PRIMARYKEY')
    ? new EngramError('conflict', message, { cause: error })
    : error;
}
