/**
 * Per agent and day counts in the embedded SQLite file (migration 11, `agent_activity`;
 * migration 15 added the upstream spend), one column per `ACTIVITY_COUNTS` name.
 *
 * `add` is one `INSERT … ON CONFLICT DO UPDATE SET n = n + excluded.n`: the sum happens
 * inside the statement, under the write lock, so increments from other connections to the
 * file (other processes) are never lost to a read-modify-write. Not group-committed
 * (`group-commit.ts`): the recorder writes once per agent and day every few seconds, and
 * a flush should know its counts are stored when it resolves.
 */
import { ACTIVITY_COUNTS, checkIncrement, dayProblem, isEmptyIncrement } from '../../domain/activity.js';
import { EngramError } from '../../errors.js';
import type { ActivityStore, DailyActivity, DailyCounts } from '../../ports/activity.js';
import type { SqliteDatabase } from './database.js';

/** The SQLite ActivityStore; shares the database handle with the other stores and never closes it. */
export class SqliteActivityStore implements ActivityStore {
  readonly #sql;

  constructor(db: SqliteDatabase) {
    // Column names come from the fixed list, never from input.
    const columns = ACTIVITY_COUNTS.map((name) => ({ name, column: name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) }));
    this.#sql = {
      add: db.prepare<[string, string, ...number[]]>(
        `INSERT INTO agent_activity (agent_id, day, ${columns.map((c) => c.column).join(', ')}) VALUES (?, ?${', ?'.repeat(columns.length)})
         ON CONFLICT (agent_id, day) DO UPDATE SET
           ${columns.map(({ column }) => `${column} = ${column} + excluded.${column}`).join(',\n           ')}`,
      ),
      read: db.prepare<[string, string], DailyActivity>(
        `SELECT day, ${columns.map(({ name, column }) => `${column} AS ${name}`).join(', ')} FROM agent_activity WHERE agent_id = ? AND day >= ? ORDER BY day`,
      ),
      deleteAgent: db.prepare<[string]>('DELETE FROM agent_activity WHERE agent_id = ?'),
      prune: db.prepare<[string]>('DELETE FROM agent_activity WHERE day < ?'),
    };
  }

  async add(agentId: string, day: string, counts: Partial<DailyCounts>): Promise<void> {
    const checked = checkIncrement(day, counts);
    if (!checked.ok) throw new EngramError('invalid_request', checked.problem);
    if (isEmptyIncrement(checked.counts)) return; // days with nothing stay absent
    this.#sql.add.run(agentId, day, ...ACTIVITY_COUNTS.map((name) => checked.counts[name]));
  }

  async read(agentId: string, fromDay: string): Promise<DailyActivity[]> {
    checkDay(fromDay, 'fromDay');
    return this.#sql.read.all(agentId, fromDay);
  }

  async deleteAgent(agentId: string): Promise<void> {
    this.#sql.deleteAgent.run(agentId);
  }

  async prune(beforeDay: string): Promise<number> {
    checkDay(beforeDay, 'beforeDay');
    return this.#sql.prune.run(beforeDay).changes;
  }

  /** Does not close the shared database handle; its opener does (see database.ts). */
  async close(): Promise<void> {}
}

function checkDay(value: string, name: string): void {
  const problem = dayProblem(value, name);
  if (problem) throw new EngramError('invalid_request', problem);
}
