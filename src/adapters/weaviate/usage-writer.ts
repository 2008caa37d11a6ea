/**
 * Writes `markUsed` counts to Weaviate in the background: uses are counted in memory
 * (pending-uses.ts) and written within `flushMs` of the first one, and whenever the store
 * asks (before its own writes, on close). Writes never overlap, and never reject: a
 * failed use is put back and retried a flush interval later, and the failure reported.
 */
import type { Reflection } from '../../domain/types.js';
import { reflectionUuid, tenantName } from './ids.js';
import { eachLimited } from './limited.js';
import { fromProperties, laterOf } from './mapping.js';
import { PendingUses, type Use } from './pending-uses.js';
import type { ReflectionObjects } from './schema.js';
import type { TenantRegistry } from './tenants.js';

/** Uses written at once; each is a read and a PATCH. */
const CONCURRENCY = 16;

export interface UsageWriterOptions {
  /** The agent's tenant of the collection. */
  objectsOf: (agentId: string) => ReflectionObjects;
  tenants: TenantRegistry;
  flushMs: number;
  /** A write of uses failed (the uses are kept). Must not throw; errors it throws are dropped. */
  report: (error: unknown) => void;
}

export class UsageWriter {
  readonly #uses = new PendingUses();
  readonly #options: UsageWriterOptions;
  #timer: NodeJS.Timeout | undefined;
  /** The write in progress, if any; the next one starts after it. */
  #writing: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: UsageWriterOptions) {
    this.#options = options;
  }

  add(agentId: string, ids: readonly string[], at: number): void {
    this.#uses.add(agentId, ids, at);
    this.#arm();
  }

  /** The reflection as read, plus the uses its stored counters do not show yet. */
  withUses(reflection: Reflection): Reflection {
    const unseen = this.#uses.unseen(reflection.agentId, reflection.id, reflection.useCount);
    if (unseen) {
      reflection.useCount += unseen.count;
      reflection.lastUsedAt = laterOf(reflection.lastUsedAt, unseen.at);
    }
    return reflection;
  }

  /** The agent's reflections are gone: its uses are never written. */
  dropAgent(agentId: string): void {
    this.#uses.dropAgent(agentId);
  }

  /** Writes the uses counted so far, after any write in progress. Never rejects. */
  flush(): Promise<void> {
    const run = this.#writing.then(() => this.#writeAll()).catch((error: unknown) => this.#report(error));
    this.#writing = run;
    return run;
  }

  /** A last flush; nothing is scheduled after it. */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.flush();
  }

  #arm(): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.flush();
    }, this.#options.flushMs);
    // Pending uses never keep the process alive; the store's close() writes them.
    this.#timer.unref();
  }

  async #writeAll(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#uses.empty) return;
    await eachLimited(this.#uses.take(), CONCURRENCY, (use) => this.#write(use));
    // Uses put back after a failure are retried a flush interval later.
    if (!this.#uses.empty) this.#arm();
  }

  /**
   * Reads useCount and lastUsedAt, and PATCHes them incremented. Weaviate has no
   * conditional write, so a use counted by another replica between the two is lost (a
   * ranking counter, which the port already lets a crash lose). The PATCH touches nothing
   * else, so it never undoes a content update.
   */
  async #write(use: Use): Promise<void> {
    const objects = this.#options.objectsOf(use.agentId);
    const uuid = reflectionUuid(use.agentId, use.id);
    try {
      const found = await objects.query.fetchObjectById(uuid, { returnProperties: ['useCount', 'lastUsedAt'] });
      if (!found) return this.#uses.settle(use); // deleted since: nothing left to count
      const stored = fromProperties(found.properties, use.agentId);
      use.target = stored.useCount + use.count;
      const lastUsedAt = Math.max(stored.lastUsedAt ?? use.at, use.at);
      await objects.data.update({ id: uuid, properties: { useCount: use.target, lastUsedAt } });
      this.#uses.settle(use);
    } catch (error) {
      if (await this.#gone(use.agentId, uuid)) return this.#uses.settle(use);
      if (this.#uses.restore(use)) this.#report(error);
    }
  }

  /** The reflection (or its agent's tenant) no longer exists; false when that cannot be told. */
  async #gone(agentId: string, uuid: string): Promise<boolean> {
    if (await this.#options.tenants.missing(tenantName(agentId))) return true;
    try {
      return (await this.#options.objectsOf(agentId).query.fetchObjectById(uuid)) === null;
    } catch {
      return false;
    }
  }

  #report(error: unknown): void {
    try {
      this.#options.report(error);
    } catch {
      // Nothing left to tell.
    }
  }
}
