/**
 * Per agent and day counts in the embedded SQLite file (migration 11, `agent_activity`).
 *
 * `add` is one `INSERT … ON CONFLICT DO UPDATE SET n = n + excluded.n`: the sum happens
 * inside the statement, under the write lock, so increments from other connections to the
 * file (other processes) are never lost to a read-modify-write. Not group-committed
 * (`group-commit.ts`): the recorder writes once per agent and day every few seconds, and
 * a flush should know its counts are stored when it resolves.
 */
import { checkIncrement, dayProblem, isEmptyIncrement } from '../../domain/activity.js';
import { EngramError } from '../../errors.js';
import type { ActivityStore, DailyActivity, DailyCounts } from '../../ports/activity.js';
import type { SqliteDatabase } from './database.js';

/** The SQLite ActivityStore; shares the database handle with the other stores and never closes it. */
export class SqliteActivityStore implements ActivityStore {
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#sql = {
      add: db.prepare<[string, string, number, number, number]>(
        `INSERT INTO agent_activity (agent_id, day, requests, injected, extractions) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (agent_id, day) DO UPDATE SET
           requests = requests + excluded.requests,
           injected = injected + excluded.injected,
           extractions = extractions + excluded.extractions`,
      ),
      read: db.prepare<[string, string], DailyActivity>(
        'SELECT day, requests, injected, extractions FROM agent_activity WHERE agent_id = ? AND day >= ? ORDER BY day',
      ),
      deleteAgent: db.prepare<[string]>('DELETE FROM agent_activity WHERE agent_id = ?'),
      prune: db.prepare<[string]>('DELETE FROM agent_activity WHERE day < ?'),
    };
  }

  async add(agentId: string, day: string, counts: Partial<DailyCounts>): Promise<void> {
    const checked = checkIncrement(day, counts);
    if (!checked.ok) throw new EngramError('invalid_request', checked.problem);
    if (isEmptyIncrement(checked.counts)) return; // days with nothing stay absent
    const { requests, injected, extractions } = checked.counts;
    this.#sql.add.run(agentId, day, requests, injected, extractions);
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
