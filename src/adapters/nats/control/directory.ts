/**
 * The directory (orgs, agents, tokens) in a NATS KV bucket, shared by every replica.
 *
 * Keys (`keys.ts`): `org.<id>` -> Org, `agent.<id>` -> AgentEntry, `token.<hash>` ->
 * {hash, token}, and name claims `orgname.<name>`, `agentname.<org>.<name>` that make
 * names unique (`name-claims.ts`).
 *
 * Reads come from an in-memory mirror of the bucket (`directory-mirror.ts`): no round
 * trip on the hot path, and they keep working while NATS is unreachable. Writes go to
 * NATS (so they fail while it is unreachable), revision-checked where a record may
 * change under them, and resolve once this replica's mirror has applied them.
 *
 * Records of several keys cannot change atomically, so writers order their steps so that
 * a crash leaves nothing harmful: a record's dependants are checked after it is written
 * (an agent whose org vanished meanwhile is withdrawn; the org's delete lists agents only
 * after removing the org), and reads ignore tokens and agents whose org is gone.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { withAgentDefaults } from '../../../domain/directory-records.js';
import type { Agent, Org, TokenRecord } from '../../../domain/types.js';
import { EngramError } from '../../../errors.js';
import type { AgentEntry, Directory, TokenLookup } from '../../../ports/directory.js';
import type { NatsContext } from '../connection.js';
import { DirectoryMirror, type StoredToken } from './directory-mirror.js';
import { directoryKeys } from './keys.js';
import {
  byCreation,
  CallerError,
  isWrongLastSequence,
  KvStore,
  readJson,
  retryLostRaces,
  writeDeleteMarker,
  type ErrorReporter,
  type KvStoreOptions,
} from './kv-support.js';
import { NameClaims, type NameClaim } from './name-claims.js';
import { TokenUses } from './token-uses.js';

export interface NatsDirectoryOptions extends KvStoreOptions {
  now: () => number;
  /** `lastUsedAt` is written at most this often per token (default in `index.ts`: 60 s). */
  lastUsedResolutionMs: number;
  /** A name claim without its record is taken over once this old (`name-claims.ts`). */
  staleClaimMs: number;
  /** How often the mirror checks that its watch still delivers (`directory-mirror.ts`). */
  watchCheckMs: number;
  onError: ErrorReporter;
}

/** Far more than concurrent writers of one agent ever are; each lost race re-reads. */
const UPDATE_ATTEMPTS = 50;

export class NatsDirectory extends KvStore<NatsDirectoryOptions> implements Directory {
  readonly #mirror: DirectoryMirror;
  readonly #claims: NameClaims;
  readonly #uses: TokenUses;

  private constructor(ctx: NatsContext, kv: KV, mirror: DirectoryMirror, options: NatsDirectoryOptions) {
    super(ctx, kv, options);
    this.#mirror = mirror;
    this.#claims = new NameClaims({ kv, js: ctx.js, bucket: options.bucket, staleAfterMs: options.staleClaimMs, now: options.now });
    this.#uses = new TokenUses(kv, mirror, {
      resolutionMs: options.lastUsedResolutionMs,
      timeoutMs: options.timeoutMs,
      onError: options.onError,
    });
  }

  static async open(ctx: NatsContext, kv: KV, options: NatsDirectoryOptions): Promise<NatsDirectory> {
    const mirror = await DirectoryMirror.open(kv, ctx.nc, {
      timeoutMs: options.timeoutMs,
      checkEveryMs: options.watchCheckMs,
      onError: options.onError,
    });
    return new NatsDirectory(ctx, kv, mirror, options);
  }

  async createOrg(org: Org): Promise<void> {
    await this.guard('createOrg', async () => {
      const nameKey = directoryKeys.orgName(org.name);
      const conflict = `An organisation named "${org.name}" already exists`;
      await this.#claims.take(nameKey, { id: org.id, name: org.name }, (held) => this.#orgHolds(held), conflict);
      const revision = await this.#createRecord(directoryKeys.org(org.id), org, () => this.#claims.release(nameKey, org.id));
      await this.#keepClaimOrWithdraw(nameKey, org.id, directoryKeys.org(org.id), revision, conflict);
      await this.#settle(revision);
    });
  }

  async getOrg(idOrName: string): Promise<Org | undefined> {
    const org = this.#mirror.org(idOrName) ?? this.#mirror.orgByName(idOrName);
    return org && structuredClone(org);
  }

  async listOrgs(): Promise<Org[]> {
    return structuredClone(this.#mirror.orgs().sort(byCreation));
  }

  async deleteOrg(id: string): Promise<string[] | undefined> {
    return this.guard('deleteOrg', async () => {
      const key = directoryKeys.org(id);
      const org = await readJson<Org>(this.kv, key);
      if (!org) return undefined;
      // The org goes first: an agent created concurrently checks for its org after writing
      // itself and withdraws; one written before that is listed below.
      let last = await this.#deleteIfAt(key, org.revision);
      if (last === undefined) return undefined; // another replica deleted it first
      await this.#mirror.fresh(this.options.timeoutMs);
      const agentIds = this.#mirror.agentsOf(id).map((agent) => agent.id);
      for (const agentId of agentIds) last = Math.max(last, (await this.#removeAgent(id, agentId)) ?? 0);
      last = Math.max(last, (await this.#claims.release(directoryKeys.orgName(org.value.name), id)) ?? 0);
      await this.#settle(last);
      return agentIds;
    });
  }

  async createAgent(entry: AgentEntry): Promise<void> {
    await this.guard('createAgent', async () => {
      const { agent } = entry;
      const orgKey = directoryKeys.org(agent.orgId);
      const noOrg = () => new EngramError('not_found', `No organisation with id "${agent.orgId}"`);
      if (!(await readJson(this.kv, orgKey))) throw noOrg();
      const nameKey = directoryKeys.agentName(agent.orgId, agent.name);
      const conflict = `An agent named "${agent.name}" already exists in this organisation`;
      const claim = { id: agent.id, name: agent.name, orgId: agent.orgId };
      await this.#claims.take(nameKey, claim, (held) => this.#agentHolds(held), conflict);
      const key = directoryKeys.agent(agent.id);
      const revision = await this.#createRecord(key, entry, () => this.#claims.release(nameKey, agent.id));
      if (!(await readJson(this.kv, orgKey))) {
        // The org was deleted while this agent was being written: withdraw it.
        await this.#deleteIfAt(key, revision);
        await this.#claims.release(nameKey, agent.id);
        throw noOrg();
      }
      await this.#keepClaimOrWithdraw(nameKey, agent.id, key, revision, conflict);
      await this.#settle(revision);
    });
  }

  async getAgent(orgId: string, idOrName: string): Promise<Agent | undefined> {
    const byId = this.#mirror.agent(idOrName)?.agent;
    if (byId?.orgId === orgId) return copyAgent(byId);
    const byName = this.#mirror.agentsOf(orgId).find((agent) => agent.name === idOrName);
    return byName && copyAgent(byName);
  }

  async agentEntry(agentId: string): Promise<AgentEntry | undefined> {
    const entry = this.#liveAgent(agentId);
    return entry && { agent: copyAgent(entry.agent), sealedSecrets: entry.sealedSecrets };
  }

  async listAgents(orgId: string): Promise<Agent[]> {
    return this.#mirror.agentsOf(orgId).sort(byCreation).map(copyAgent);
  }

  async updateAgent(orgId: string, agentId: string, change: (current: AgentEntry) => AgentEntry): Promise<Agent | undefined> {
    return this.guard('updateAgent', async () => {
      const key = directoryKeys.agent(agentId);
      // A claim taken for a new name in an earlier attempt, kept while the change still wants that name.
      let claimed: string | undefined;
      const dropClaim = async () => {
        if (claimed !== undefined) await this.#claims.release(claimed, agentId);
        claimed = undefined;
      };
      for (let attempt = 1; attempt <= UPDATE_ATTEMPTS; attempt++) {
        const stored = await readJson<AgentEntry>(this.kv, key);
        if (!stored || stored.value.agent.orgId !== orgId) {
          await dropClaim();
          return undefined;
        }
        const current: AgentEntry = { agent: withAgentDefaults(stored.value.agent), sealedSecrets: stored.value.sealedSecrets };
        let next: AgentEntry;
        try {
          next = change(structuredClone(current));
        } catch (error) {
          await dropClaim();
          throw new CallerError(error);
        }
        if (next.agent.id !== agentId || next.agent.orgId !== orgId) {
          await dropClaim();
          throw new CallerError(new Error('updateAgent: change must keep the agent id and org'));
        }
        const renamed = next.agent.name !== current.agent.name;
        const nameKey = directoryKeys.agentName(orgId, next.agent.name);
        if (claimed !== undefined && (!renamed || claimed !== nameKey)) await dropClaim();
        if (renamed && claimed === undefined) {
          const conflict = `An agent named "${next.agent.name}" already exists in this organisation`;
          await this.#claims.take(nameKey, { id: agentId, name: next.agent.name, orgId }, (held) => this.#agentHolds(held), conflict);
          claimed = nameKey;
        }
        let revision: number;
        try {
          revision = await this.kv.update(key, JSON.stringify(next), stored.revision);
        } catch (error) {
          if (!isWrongLastSequence(error)) {
            await dropClaim().catch(() => undefined);
            throw error;
          }
          // Another writer came first: run `change` again on the newer record.
          if (attempt > 2) await new Promise((resolve) => setTimeout(resolve, Math.random() * attempt * 2));
          continue;
        }
        if (renamed) {
          const released = await this.#claims.release(directoryKeys.agentName(orgId, current.agent.name), agentId);
          revision = Math.max(revision, released ?? 0);
        }
        await this.#settle(revision);
        return withAgentDefaults(next.agent);
      }
      await dropClaim();
      throw new Error(`agent ${agentId} kept changing under ${UPDATE_ATTEMPTS} attempts to update it`);
    });
  }

  async deleteAgent(orgId: string, agentId: string): Promise<boolean> {
    return this.guard('deleteAgent', async () => {
      const last = await this.#removeAgent(orgId, agentId);
      if (last === undefined) return false;
      await this.#settle(last);
      return true;
    });
  }

  async createToken(token: TokenRecord, tokenHash: string): Promise<void> {
    await this.guard('createToken', async () => {
      const agentKey = directoryKeys.agent(token.agentId);
      const noAgent = () => new EngramError('not_found', `No agent with id "${token.agentId}"`);
      if (!(await readJson(this.kv, agentKey))) throw noAgent();
      const key = directoryKeys.token(tokenHash);
      const stored: StoredToken = { hash: tokenHash, token };
      const revision = await this.create(key, stored, 'A token with this hash already exists');
      if (!(await readJson(this.kv, agentKey))) {
        // The agent was deleted while the token was being written (its delete lists tokens after removing it).
        await this.#deleteIfAt(key, revision);
        throw noAgent();
      }
      await this.#settle(revision);
    });
  }

  /**
   * Served from the mirror; the use is recorded in the background (`token-uses.ts`). A
   * token the mirror does not hold may have been created on another replica a moment ago
   * (its watch lags under load): the mirror catches up once before the token is refused.
   */
  async findToken(tokenHash: string): Promise<TokenLookup | undefined> {
    let stored = this.#mirror.token(tokenHash);
    if (!stored) {
      await this.#mirror.fresh(this.options.timeoutMs).catch(() => undefined);
      stored = this.#mirror.token(tokenHash);
    }
    if (!stored || stored.value.token.revokedAt !== null) return undefined;
    const entry = this.#liveAgent(stored.value.token.agentId);
    if (!entry) return undefined;
    const token = { ...stored.value.token };
    const now = this.options.now();
    if (this.#uses.due(token, now)) {
      this.#uses.record(stored, now);
      token.lastUsedAt = now;
    }
    return { token, agent: copyAgent(entry.agent) };
  }

  async revokedToken(tokenHash: string): Promise<TokenRecord | undefined> {
    const stored = this.#mirror.token(tokenHash);
    return stored && stored.value.token.revokedAt !== null ? { ...stored.value.token } : undefined;
  }

  async listTokens(agentId: string): Promise<TokenRecord[]> {
    return this.#mirror
      .tokensOf(agentId)
      .map((stored) => ({ ...stored.value.token }))
      .sort(byCreation);
  }

  async tokenHashes(agentId: string): Promise<Map<string, string>> {
    return new Map(this.#mirror.tokensOf(agentId).map((stored) => [stored.value.token.id, stored.value.hash]));
  }

  async revokeToken(agentId: string, tokenId: string, at: number): Promise<boolean> {
    return this.guard('revokeToken', async () => {
      // A token another replica issued a moment ago must be found too.
      await this.#mirror.fresh(this.options.timeoutMs);
      const hash = this.#mirror.tokenHash(tokenId);
      if (hash === undefined) return false;
      const key = directoryKeys.token(hash);
      return retryLostRaces(UPDATE_ATTEMPTS, `token ${tokenId} kept changing under ${UPDATE_ATTEMPTS} attempts to revoke it`, async () => {
        const stored = await readJson<StoredToken>(this.kv, key);
        const token = stored?.value.token;
        if (!stored || !token || token.id !== tokenId || token.agentId !== agentId || token.revokedAt !== null) return false;
        // Revision-checked, so a concurrent `lastUsedAt` write can never undo the revocation.
        await this.#settle(await this.kv.update(key, JSON.stringify({ ...stored.value, token: { ...token, revokedAt: at } }), stored.revision));
        return true;
      });
    });
  }

  /** Stops the mirror's watch and waits for background `lastUsedAt` writes; the connection stays open. */
  override async close(): Promise<void> {
    await this.#uses.settled();
    await this.#mirror.close();
  }

  /** The agent, unless it or its org is gone (a crash mid-delete can leave an agent of a deleted org). */
  #liveAgent(agentId: string): AgentEntry | undefined {
    const entry = this.#mirror.agent(agentId);
    return entry && this.#mirror.org(entry.agent.orgId) ? entry : undefined;
  }

  /**
   * Deletes the agent (if it belongs to `orgId`), then its tokens and its name claim.
   * Returns the revision of the last delete, or undefined when there was no such agent.
   */
  async #removeAgent(orgId: string, agentId: string): Promise<number | undefined> {
    const key = directoryKeys.agent(agentId);
    const removed = await retryLostRaces(UPDATE_ATTEMPTS, `agent ${agentId} kept changing under ${UPDATE_ATTEMPTS} attempts to delete it`, async () => {
      const stored = await readJson<AgentEntry>(this.kv, key);
      if (!stored || stored.value.agent.orgId !== orgId) return undefined;
      return { agent: stored.value.agent, revision: await writeDeleteMarker(this.ctx.js, this.options.bucket, key, stored.revision) };
    });
    if (!removed) return undefined;
    let last = removed.revision;
    // Tokens are listed after the agent is gone: one created concurrently withdraws itself.
    await this.#mirror.fresh(this.options.timeoutMs);
    for (const { value } of this.#mirror.tokensOf(agentId)) {
      last = Math.max(last, await writeDeleteMarker(this.ctx.js, this.options.bucket, directoryKeys.token(value.hash)));
    }
    const released = await this.#claims.release(directoryKeys.agentName(orgId, removed.agent.name), agentId);
    return Math.max(last, released ?? 0);
  }

  /**
   * Creates a record under a fresh key. When the server refused the write, `rollback`
   * frees the name claim. After a timeout the write may still have landed, so the claim
   * stays: were the record written, releasing it would let another take its name; were it
   * not, the claim counts as dead once stale. An existing key (the same id) keeps it too.
   */
  async #createRecord(key: string, value: unknown, rollback: () => Promise<unknown>): Promise<number> {
    try {
      return await this.create(key, value, 'A record with this id already exists');
    } catch (error) {
      if (error instanceof JetStreamApiError) {
        await rollback().catch((undo: unknown) => this.options.onError(undo, `releasing the name claim of ${key}`));
      }
      throw error;
    }
  }

  /**
   * After writing a record under a claimed name: if another writer took the claim over in
   * the meantime (it judged the claim dead), that writer wins and this record is withdrawn.
   */
  async #keepClaimOrWithdraw(nameKey: string, id: string, recordKey: string, revision: number, conflict: string): Promise<void> {
    if (await this.#claims.holds(nameKey, id)) return;
    await this.#deleteIfAt(recordKey, revision);
    throw new EngramError('conflict', conflict);
  }

  /** Writes a delete marker if `key` is still at `revision`; the marker's revision, or undefined if it moved on. */
  async #deleteIfAt(key: string, revision: number): Promise<number | undefined> {
    try {
      return await writeDeleteMarker(this.ctx.js, this.options.bucket, key, revision);
    } catch (error) {
      if (isWrongLastSequence(error)) return undefined;
      throw error;
    }
  }

  async #orgHolds(held: NameClaim): Promise<boolean> {
    const org = await readJson<Org>(this.kv, directoryKeys.org(held.id));
    return org?.value.name === held.name;
  }

  async #agentHolds(held: NameClaim): Promise<boolean> {
    const entry = await readJson<AgentEntry>(this.kv, directoryKeys.agent(held.id));
    return entry?.value.agent.name === held.name && entry.value.agent.orgId === held.orgId;
  }

  /**
   * Read-your-writes: resolves once the mirror has applied `revision`. A mirror that lags
   * past the timeout is reported and its watch restarted, then given another timeout. The
   * write is durable either way, so a mirror still behind after that is only reported.
   */
  async #settle(revision: number): Promise<void> {
    const { timeoutMs, onError } = this.options;
    if (await this.#mirror.waitFor(revision, timeoutMs)) return;
    onError(new Error(`the directory mirror has not applied revision ${revision} within ${timeoutMs} ms; restarting its watch`), 'directory watch');
    this.#mirror.kick();
    if (await this.#mirror.waitFor(revision, timeoutMs)) return;
    onError(new Error(`the directory mirror has still not applied revision ${revision}`), 'directory watch');
  }
}

function copyAgent(agent: Agent): Agent {
  return withAgentDefaults(structuredClone(agent));
}
