/**
 * An in-memory copy of the directory bucket, kept current by a KV watch (initial values,
 * then every put and delete in stream order). `findToken` runs on every proxied request,
 * so the directory answers reads from here without a round trip to NATS.
 *
 * Consistency, as the Directory adapter relies on it:
 * - `applied` is the highest bucket revision this copy reflects. A store that wrote
 *   revision r waits for `waitFor(r)` before resolving, so it reads its own writes.
 * - `fresh()` waits until the copy reflects the bucket as it is now (one request for the
 *   stream's last sequence): writes that must see other replicas' latest records use it.
 * - Another replica's writes arrive as fast as the watch delivers them (milliseconds).
 *   A revoked token therefore keeps working on other replicas until their watch delivers
 *   the revocation; while a replica is cut off from NATS it keeps serving what it has.
 *
 * The watch's consumer can vanish under it (a server that kept it only in memory, a
 * cluster's leader change, a partition longer than its inactivity threshold), and the
 * client would only notice after a minute of missed heartbeats, while revoked tokens kept
 * working here. So the watch is restarted from `applied + 1` when the connection comes
 * back, when a write of this replica is not seen in time (`kick()`), and when a check
 * every `checkEveryMs` finds that a revision the stream had at the previous check has
 * still not arrived.
 */
import type { KV, KvEntry } from '@nats-io/kv';
import type { NatsConnection, QueuedIterator, Status } from '@nats-io/transport-node';
import type { Agent, Org, TokenRecord } from '../../../domain/types.js';
import type { AgentEntry } from '../../../ports/directory.js';
import { NatsStalledError, pause, type ErrorReporter, type Stored } from './kv-support.js';

/** A token's record with its hash (the key holds only an encoding of the hash). */
export interface StoredToken {
  hash: string;
  token: TokenRecord;
}

type MirrorRecord =
  | { kind: 'org'; org: Org }
  | { kind: 'agent'; entry: AgentEntry }
  | { kind: 'token'; stored: Stored<StoredToken> };

/** Sets of ids under a key (agents of an org, token hashes of an agent). */
class Grouping {
  readonly #groups = new Map<string, Set<string>>();
  add(group: string, id: string): void {
    const members = this.#groups.get(group) ?? new Set<string>();
    members.add(id);
    this.#groups.set(group, members);
  }
  remove(group: string, id: string): void {
    const members = this.#groups.get(group);
    members?.delete(id);
    if (members?.size === 0) this.#groups.delete(group);
  }
  members(group: string): string[] {
    return [...(this.#groups.get(group) ?? [])];
  }
}

export interface DirectoryMirrorOptions {
  /** How long the initial load may take. */
  timeoutMs: number;
  /** How often to check that the watch still delivers (one stream info request). */
  checkEveryMs: number;
  onError: ErrorReporter;
}

interface Waiter {
  revision: number;
  resolve(seen: boolean): void;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;

export class DirectoryMirror {
  readonly #kv: KV;
  readonly #nc: NatsConnection;
  readonly #onError: ErrorReporter;
  readonly #stopped = new AbortController();
  #applied = 0;
  #watch: QueuedIterator<KvEntry> | undefined;
  /** Set by `kick()`: the current watch ends on purpose and restarts at once. */
  #kicked = false;
  #events: AsyncIterable<Status> | undefined;
  #running: Promise<void> = Promise.resolve();
  readonly #waiters = new Set<Waiter>();
  #checkTimer: NodeJS.Timeout | undefined;
  /** The stream's last revision at the previous check, while the copy had not reached it. */
  #owed: number | undefined;

  readonly #records = new Map<string, MirrorRecord>();
  readonly #orgs = new Map<string, Org>();
  readonly #orgIdByName = new Map<string, string>();
  readonly #agents = new Map<string, AgentEntry>();
  readonly #agentsOfOrg = new Grouping();
  readonly #tokens = new Map<string, Stored<StoredToken>>();
  readonly #tokenHashById = new Map<string, string>();
  readonly #tokensOfAgent = new Grouping();

  private constructor(kv: KV, nc: NatsConnection, onError: ErrorReporter) {
    this.#kv = kv;
    this.#nc = nc;
    this.#onError = onError;
  }

  /** Loads the whole bucket; rejects when it cannot within `timeoutMs` (NATS unreachable). */
  static async open(kv: KV, nc: NatsConnection, options: DirectoryMirrorOptions): Promise<DirectoryMirror> {
    const mirror = new DirectoryMirror(kv, nc, options.onError);
    const { state } = (await kv.status()).streamInfo;
    mirror.#running = mirror.#run();
    mirror.#followConnection();
    mirror.#scheduleCheck(options.checkEveryMs);
    // The directory never purges (deletes are markers), so the last message is always
    // delivered by the watch; an empty stream has nothing to wait for.
    if (state.messages > 0 && !(await mirror.waitFor(state.last_seq, options.timeoutMs))) {
      await mirror.close();
      throw new NatsStalledError(`the directory did not load within ${options.timeoutMs} ms`);
    }
    return mirror;
  }

  /** Resolves true once revision `revision` is reflected, false after `timeoutMs`. */
  waitFor(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.#applied >= revision) return Promise.resolve(true);
    if (this.#stopped.signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        revision,
        resolve: (seen) => {
          clearTimeout(timer);
          this.#waiters.delete(waiter);
          resolve(seen);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  /** Waits until the copy reflects every write made to the bucket before this call. */
  async fresh(timeoutMs: number): Promise<void> {
    const last = (await this.#kv.status()).streamInfo.state.last_seq;
    if (!(await this.waitFor(last, timeoutMs))) {
      this.kick();
      throw new NatsStalledError(`the directory watch has not caught up with revision ${last} within ${timeoutMs} ms`);
    }
  }

  /** Restarts the watch from the last applied revision (a lost consumer is not noticed otherwise). */
  kick(): void {
    this.#kicked = true;
    this.#watch?.stop();
  }

  org(id: string): Org | undefined {
    return this.#orgs.get(id);
  }

  orgByName(name: string): Org | undefined {
    const id = this.#orgIdByName.get(name);
    return id === undefined ? undefined : this.#orgs.get(id);
  }

  orgs(): Org[] {
    return [...this.#orgs.values()];
  }

  agent(id: string): AgentEntry | undefined {
    return this.#agents.get(id);
  }

  agentsOf(orgId: string): Agent[] {
    return this.#agentsOfOrg.members(orgId).flatMap((id) => this.#agents.get(id)?.agent ?? []);
  }

  token(hash: string): Stored<StoredToken> | undefined {
    return this.#tokens.get(hash);
  }

  tokenHash(tokenId: string): string | undefined {
    return this.#tokenHashById.get(tokenId);
  }

  tokensOf(agentId: string): Stored<StoredToken>[] {
    return this.#tokensOfAgent.members(agentId).flatMap((hash) => this.#tokens.get(hash) ?? []);
  }

  async close(): Promise<void> {
    this.#stopped.abort();
    clearTimeout(this.#checkTimer);
    this.#watch?.stop();
    const events = this.#events as Partial<QueuedIterator<Status>> | undefined;
    events?.stop?.();
    for (const waiter of this.#waiters) waiter.resolve(false);
    await this.#running;
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stopped.signal.aborted) {
      this.#kicked = false;
      try {
        const watch = await this.#kv.watch(
          this.#applied === 0 ? { key: '>' } : { key: '>', resumeFromRevision: this.#applied + 1 },
        );
        this.#watch = watch;
        if (this.#stopped.signal.aborted) watch.stop();
        failures = 0;
        for await (const entry of watch) this.#apply(entry);
        if (!this.#kicked && !this.#stopped.signal.aborted) throw new Error('the directory watch ended by itself');
      } catch (error) {
        if (this.#stopped.signal.aborted) break;
        failures++;
        this.#onError(error, 'directory watch');
      }
      this.#watch = undefined;
      // Right away after a kick or reconnect; backing off while NATS refuses the watch.
      if (failures > 0) await pause(Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (failures - 1)), this.#stopped.signal);
    }
  }

  #scheduleCheck(everyMs: number): void {
    this.#checkTimer = setTimeout(() => {
      void this.#check().finally(() => {
        if (!this.#stopped.signal.aborted) this.#scheduleCheck(everyMs);
      });
    }, everyMs);
  }

  async #check(): Promise<void> {
    let last: number;
    try {
      last = (await this.#kv.status()).streamInfo.state.last_seq;
    } catch {
      return; // NATS unreachable: the reconnect restarts the watch
    }
    if (this.#stopped.signal.aborted) return;
    if (this.#owed !== undefined && this.#applied < this.#owed) {
      this.#onError(new Error(`the directory watch stalled before revision ${this.#owed}; restarting it`), 'directory watch');
      this.kick();
    }
    this.#owed = last > this.#applied ? last : undefined;
  }

  #followConnection(): void {
    const events = this.#nc.status();
    this.#events = events;
    void (async () => {
      for await (const event of events) if (event.type === 'reconnect') this.kick();
    })().catch((error: unknown) => this.#onError(error, 'directory watch: connection events'));
  }

  #apply(entry: KvEntry): void {
    // A restarted watch may deliver again what was applied already.
    if (entry.revision <= this.#applied) return;
    this.#applied = entry.revision;
    try {
      this.#unindex(entry.key);
      if (entry.operation === 'PUT') this.#index(entry);
    } catch (error) {
      this.#onError(error, `directory watch: unreadable value of ${entry.key}`);
    }
    for (const waiter of this.#waiters) if (waiter.revision <= this.#applied) waiter.resolve(true);
  }

  #index(entry: KvEntry): void {
    const kind = entry.key.slice(0, entry.key.indexOf('.'));
    let record: MirrorRecord;
    if (kind === 'org') {
      const org = entry.json<Org>();
      record = { kind, org };
      this.#orgs.set(org.id, org);
      this.#orgIdByName.set(org.name, org.id);
    } else if (kind === 'agent') {
      const agentEntry = entry.json<AgentEntry>();
      record = { kind, entry: agentEntry };
      this.#agents.set(agentEntry.agent.id, agentEntry);
      this.#agentsOfOrg.add(agentEntry.agent.orgId, agentEntry.agent.id);
    } else if (kind === 'token') {
      const stored = { value: entry.json<StoredToken>(), revision: entry.revision };
      record = { kind, stored };
      const { hash, token } = stored.value;
      this.#tokens.set(hash, stored);
      this.#tokenHashById.set(token.id, hash);
      this.#tokensOfAgent.add(token.agentId, hash);
    } else {
      return; // name claims: only writers read them, straight from the bucket
    }
    this.#records.set(entry.key, record);
  }

  #unindex(key: string): void {
    const record = this.#records.get(key);
    if (!record) return;
    this.#records.delete(key);
    if (record.kind === 'org') {
      this.#orgs.delete(record.org.id);
      if (this.#orgIdByName.get(record.org.name) === record.org.id) this.#orgIdByName.delete(record.org.name);
    } else if (record.kind === 'agent') {
      this.#agents.delete(record.entry.agent.id);
      this.#agentsOfOrg.remove(record.entry.agent.orgId, record.entry.agent.id);
    } else {
      const { hash, token } = record.stored.value;
      this.#tokens.delete(hash);
      if (this.#tokenHashById.get(token.id) === hash) this.#tokenHashById.delete(token.id);
      this.#tokensOfAgent.remove(token.agentId, hash);
    }
  }
}
