/**
 * `reflection_tenants.version`: changes with every write to an agent's reflections, from
 * any connection, so an in-memory snapshot built from an older version is never used.
 * Bumped inside the writing transaction; read once per search (one indexed lookup).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { SqliteDatabase } from './database.js';

export class TenantVersions {
  readonly #version: BetterSqlite3.Statement<[string], number>;
  readonly #create: BetterSqlite3.Statement<[string], number>;
  readonly #bump: BetterSqlite3.Statement<[string], number>;

  constructor(db: SqliteDatabase) {
    this.#version = db.prepare<[string], number>('SELECT version FROM reflection_tenants WHERE agent_id = ?').pluck();
    this.#create = db
      .prepare<[string], number>(
        `INSERT INTO reflection_tenants (agent_id, version) VALUES (?, 1)
         ON CONFLICT (agent_id) DO UPDATE SET version = version + 1 RETURNING version`,
      )
      .pluck();
    this.#bump = db
      .prepare<[string], number>('UPDATE reflection_tenants SET version = version + 1 WHERE agent_id = ? RETURNING version')
      .pluck();
  }

  /** 0 for an agent that never had reflections. */
  version(agentId: string): number {
    return this.#version.get(agentId) ?? 0;
  }

  /**
   * Marks the agent's reflections as changed and returns the new version; `create`
   * registers an agent seen for the first time (undefined otherwise). Call inside the
   * writing transaction.
   */
  bump(agentId: string, create: boolean): number | undefined {
    return (create ? this.#create : this.#bump).get(agentId);
  }
}
