/**
 * One tenant per agent. Tenants are created on an agent's first write (tolerating one
 * that exists: another replica may have made it) and removed with the agent. A read of
 * an agent that has no tenant yet is not an error for the port (it has no reflections),
 * but Weaviate rejects it; `missing` tells the two apart after a failure, by asking
 * Weaviate rather than by matching its error text.
 */
import type { Tenants } from 'weaviate-client';

export class TenantRegistry {
  readonly #tenants: Tenants;
  /** Tenants this process created or saw, with the creation in flight, if any. */
  readonly #known = new Map<string, Promise<void>>();

  constructor(tenants: Tenants) {
    this.#tenants = tenants;
  }

  /** Resolves once the tenant exists. Concurrent first writes share one creation. */
  ensure(name: string): Promise<void> {
    let ready = this.#known.get(name);
    if (!ready) {
      ready = this.#create(name);
      this.#known.set(name, ready);
      // A failed creation is retried by the next write, not cached.
      ready.catch(() => this.#known.delete(name));
    }
    return ready;
  }

  /** True when Weaviate confirms the tenant does not exist; false if it exists or cannot tell. */
  async missing(name: string): Promise<boolean> {
    try {
      const found = await this.#tenants.getByName(name);
      if (found === null) this.#known.delete(name);
      return found === null;
    } catch {
      return false;
    }
  }

  /** Removes the tenant and everything in it; a tenant that does not exist is no error. */
  async remove(name: string): Promise<void> {
    this.#known.delete(name);
    try {
      await this.#tenants.remove(name);
    } catch (error) {
      if (!(await this.missing(name))) throw error;
    }
  }

  async #create(name: string): Promise<void> {
    try {
      await this.#tenants.create({ name });
    } catch (error) {
      // Creating a tenant that exists (a race with another replica) is not a failure.
      const found = await this.#tenants.getByName(name).catch(() => null);
      if (found === null) throw error;
    }
  }
}
