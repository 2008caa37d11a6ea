/**
 * The control plane over its ports: the directory, conversations, recorded responses and
 * root indexes, with what belongs above any one engine: new records and their ids,
 * sealing of secrets (`Vault`), revision-checked conversation updates, and deletes that
 * reach every store an agent has data in. Plain reads go to the stores directly
 * (`control.directory.getOrg(...)`).
 */
import type { ConversationState } from '../domain/conversation-state.js';
import {
  newAgent,
  newOrg,
  newToken,
  patchAgent,
  patchSecrets,
  withHeaderValues,
  type AgentPatch,
  type NewAgent,
} from '../domain/directory-records.js';
import type { ResponseRecord } from '../domain/response-record.js';
import type { Agent, AgentSecrets, Org, TokenRecord, Visibility } from '../domain/types.js';
import { partitionedConversationId } from './conversation-id.js';
import type { ControlStores, Revisioned } from '../ports/index.js';
import type { Vault } from '../security/vault.js';
import { updateConversation, type ConversationChange } from './conversation-updates.js';

export interface ControlOptions {
  vault: Vault;
  now: () => number;
}

/** Agents whose opened secrets are kept (`Control.agentSecrets`). */
const MAX_OPENED = 10_000;

export class Control {
  readonly directory: ControlStores['directory'];
  readonly conversations: ControlStores['conversations'];
  readonly responses: ControlStores['responses'];
  readonly indexes: ControlStores['indexes'];
  readonly activity: ControlStores['activity'];
  readonly requests: ControlStores['requests'];
  readonly #vault: Vault;
  readonly #now: () => number;
  /**
   * Secrets already opened, by agent, with the sealed text and agent version they came
   * from: every proxied request needs them, and opening means decrypting. A changed
   * agent or re-sealed secrets miss, so an update on any replica is seen at once.
   */
  readonly #opened = new Map<string, { sealed: string; updatedAt: number; secrets: AgentSecrets }>();

  constructor(stores: ControlStores, options: ControlOptions) {
    this.directory = stores.directory;
    this.conversations = stores.conversations;
    this.responses = stores.responses;
    this.indexes = stores.indexes;
    this.activity = stores.activity;
    this.requests = stores.requests;
    this.#vault = options.vault;
    this.#now = options.now;
  }

  async createOrg(name: string): Promise<Org> {
    const org = newOrg(name, this.#now());
    await this.directory.createOrg(org);
    return org;
  }

  /**
   * Deletes the org and its agents with everything they keep in the control stores; returns
   * the deleted agents' ids (their reflections are the caller's), or undefined. The
   * directory entry goes last: a failure half-way leaves an org the call can be repeated on.
   */
  async deleteOrg(id: string): Promise<string[] | undefined> {
    for (const agent of await this.directory.listAgents(id)) await this.#forgetAgent(agent.id);
    const agentIds = await this.directory.deleteOrg(id);
    // Agents created while this ran are gone from the directory too: forget them as well.
    for (const agentId of agentIds ?? []) await this.#forgetAgent(agentId);
    return agentIds;
  }

  /** The extra headers' values are sealed with the key; the agent record keeps their names. */
  async createAgent(input: NewAgent): Promise<Agent> {
    const agent = newAgent(input, this.#now());
    const secrets: AgentSecrets = { ...input.secrets, upstreamHeaders: { ...input.upstream.headers } };
    await this.directory.createAgent({ agent, sealedSecrets: this.#vault.sealAgentSecrets(agent.id, secrets) });
    return agent;
  }

  async updateAgent(orgId: string, agentId: string, patch: AgentPatch): Promise<Agent | undefined> {
    const { secrets, ...fields } = patch;
    const headers = fields.upstream?.headers;
    return this.directory.updateAgent(orgId, agentId, (current) => {
      const agent = patchAgent(current.agent, fields, this.#now());
      if (!secrets && !headers && !current.agent.upstream.clearHeaders) return { agent, sealedSecrets: current.sealedSecrets };
      const opened = this.#openEntry(agentId, current);
      const changed = patchSecrets(opened, { ...secrets, ...(headers ? { upstreamHeaders: { ...headers } } : {}) });
      return { agent, sealedSecrets: this.#vault.sealAgentSecrets(agentId, changed) };
    });
  }

  /**
   * Moves header values stored in clear by older versions into the sealed secrets of
   * every agent that has some (at start-up, and after an import). Returns how many agents
   * changed; the agents are otherwise untouched (`updatedAt` included).
   */
  async sealClearHeaders(): Promise<number> {
    let sealed = 0;
    for (const org of await this.directory.listOrgs()) {
      for (const listed of await this.directory.listAgents(org.id)) {
        if (!listed.upstream.clearHeaders) continue;
        await this.directory.updateAgent(org.id, listed.id, (current) => {
          const { clearHeaders: _clear, ...upstream } = current.agent.upstream;
          return {
            agent: { ...current.agent, upstream },
            sealedSecrets: this.#vault.sealAgentSecrets(listed.id, this.#openEntry(listed.id, current)),
          };
        });
        sealed++;
      }
    }
    return sealed;
  }

  #openEntry(agentId: string, entry: { agent: Agent; sealedSecrets: string }): AgentSecrets {
    return withHeaderValues(entry.agent, this.#vault.openAgentSecrets(agentId, entry.sealedSecrets));
  }

  /** Deletes the agent with its tokens, conversations, responses and index (its reflections are the caller's). */
  async deleteAgent(orgId: string, agentId: string): Promise<boolean> {
    if ((await this.directory.getAgent(orgId, agentId))?.id !== agentId) return false;
    // The directory entry last, so a failure half-way leaves an agent the call can be repeated on.
    await this.#forgetAgent(agentId);
    return this.directory.deleteAgent(orgId, agentId);
  }

  /** Decrypted secrets, for the upstream call only. */
  async agentSecrets(agentId: string): Promise<AgentSecrets | undefined> {
    const entry = await this.directory.agentEntry(agentId);
    if (!entry) {
      this.#opened.delete(agentId);
      return undefined;
    }
    const known = this.#opened.get(agentId);
    if (known && known.sealed === entry.sealedSecrets && known.updatedAt === entry.agent.updatedAt) return known.secrets;
    // Shared by every request of the agent from now on: frozen, so none can change it for the others.
    const opened = this.#openEntry(agentId, entry);
    const secrets = Object.freeze({ ...opened, upstreamHeaders: Object.freeze({ ...opened.upstreamHeaders }) });
    if (this.#opened.size >= MAX_OPENED) this.#opened.clear();
    this.#opened.set(agentId, { sealed: entry.sealedSecrets, updatedAt: entry.agent.updatedAt, secrets });
    return secrets;
  }

  /** Throws `SecretBoxError` when this deployment's key cannot open secrets sealed for the agent (an import from elsewhere). */
  openSealed(agentId: string, sealedSecrets: string): void {
    this.#vault.openAgentSecrets(agentId, sealedSecrets);
  }

  /** Stores the token's hash; returns the record (the clear token is never stored). */
  async createToken(agent: Pick<Agent, 'id' | 'orgId'>, tokenHash: string, prefix: string, name: string): Promise<TokenRecord> {
    const record = newToken(agent, prefix, name, this.#now());
    await this.directory.createToken(record, tokenHash);
    return record;
  }

  revokeToken(agentId: string, tokenId: string): Promise<boolean> {
    return this.directory.revokeToken(agentId, tokenId, this.#now());
  }

  /** Applies `change` to the conversation's latest state, again if another writer came first. */
  updateConversation(
    agentId: string,
    id: string,
    change: ConversationChange,
    known?: Revisioned<ConversationState> | null,
  ): Promise<ConversationState | undefined> {
    return updateConversation(this.conversations, agentId, id, change, known);
  }

  async getConversation(agentId: string, id: string): Promise<ConversationState | undefined> {
    return (await this.conversations.get(agentId, id))?.value;
  }

  /**
   * Keeps a Responses record for its `owner`: the end user and the project the request
   * named (`x-engram-user`, `x-engram-scope`). It is kept under its id behind the owner, as
   * a conversation's id is (`partitionedConversationId`; the agent's own traffic keeps the
   * id as it is, so records kept before owners were are still found by it). Only a request
   * of the same owner finds it again; two owners' records with one upstream id are two records.
   */
  putResponse(record: ResponseRecord, owner: Visibility): Promise<void> {
    return this.responses.put(this.#vault.sealResponse({ ...record, id: partitionedConversationId(record.id, owner) }));
  }

  /** The owner's record of response `id`; another owner's, like an unknown id, is not found. */
  async getResponse(agentId: string, id: string, owner: Visibility): Promise<ResponseRecord | undefined> {
    const stored = await this.responses.get(agentId, partitionedConversationId(id, owner));
    return stored && { ...this.#vault.openResponse(stored), id };
  }

  /** Forgets the owner's record of response `id`; false when the owner has none. */
  deleteResponse(agentId: string, id: string, owner: Visibility): Promise<boolean> {
    return this.responses.delete(agentId, partitionedConversationId(id, owner));
  }

  async close(): Promise<void> {
    await Promise.all([this.directory.close(), this.conversations.close(), this.responses.close(), this.indexes.close()]);
  }

  async #forgetAgent(agentId: string): Promise<void> {
    await this.conversations.deleteAgent(agentId);
    await this.responses.deleteAgent(agentId);
    await this.indexes.delete(agentId);
    await this.activity.deleteAgent(agentId);
    await this.requests.deleteAgent(agentId);
  }
}
