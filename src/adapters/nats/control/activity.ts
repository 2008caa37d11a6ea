/**
 * Per agent and day counts in one NATS KV bucket, shared by every replica: one key per
 * agent and day, `act.<agent>.<day>` (`keys.ts`, `activityKeys`), whose value is
 * `{agentId, day, ...counts}` (one field per `ACTIVITY_COUNTS` name; a field a day written
 * by an older version lacks counts 0). The value carries the full agent id
 * and readers check it (a key may hold only a digest of a long id, `keyPart`).
 *
 * `add` reads the day, adds, and writes revision-checked (`kv.create` for a new day,
 * `kv.update(key, value, revision)` otherwise); a writer that lost the race to another
 * replica reads again and adds to the newer sum, so no increment is lost or counted twice.
 * One exception no store can rule out: an `add` that timed out may still have landed, and
 * the caller cannot tell (the recorder keeps its counts for the next flush).
 */
import { ACTIVITY_COUNTS, checkIncrement, dayProblem, emptyCounts, isEmptyIncrement, type ActivityIncrement } from '../../../domain/activity.js';
import { EngramError } from '../../../errors.js';
import type { ActivityStore, DailyActivity, DailyCounts } from '../../../ports/activity.js';
import { activityKeys } from './keys.js';
import { createKey, KvStore, readJson, retryLostRaces } from './kv-support.js';

/** What one key holds. */
interface StoredDay extends DailyActivity {
  agentId: string;
}

/** Far more than the writers of one agent's day ever are (one per replica every few seconds); each lost race re-reads. */
const ADD_ATTEMPTS = 50;

const byDay = (a: DailyActivity, b: DailyActivity) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0);

/** The NATS KV ActivityStore; the connection belongs to its opener. */
export class NatsActivityStore extends KvStore implements ActivityStore {
  async add(agentId: string, day: string, counts: Partial<DailyCounts>): Promise<void> {
    const checked = checkIncrement(day, counts);
    if (!checked.ok) throw new EngramError('invalid_request', checked.problem);
    const increment = checked.counts;
    if (isEmptyIncrement(increment)) return; // days with nothing stay absent
    await this.guard('add', async () => {
      const key = activityKeys.day(agentId, day);
      await retryLostRaces(ADD_ATTEMPTS, `${key} kept changing under ${ADD_ATTEMPTS} attempts to add to it`, async () => {
        const stored = await readJson<StoredDay>(this.kv, key);
        // Another agent's day under this key would take a SHA-256 collision of two ids: it is replaced, as if absent.
        const base = stored?.value.agentId === agentId && stored.value.day === day ? stored.value : undefined;
        const sum = countsOf(base);
        for (const name of ACTIVITY_COUNTS) sum[name] += increment[name];
        const next: StoredDay = { agentId, day, ...sum };
        if (stored) await this.kv.update(key, JSON.stringify(next), stored.revision);
        else await createKey(this.kv, key, JSON.stringify(next));
      });
    });
  }

  /**
   * One ordered consumer over the agent's keys rather than a get per day: values are a few
   * dozen bytes, so reading the older days along costs less than a request per day, and
   * the scan fails after `timeoutMs` without progress instead of hanging.
   */
  async read(agentId: string, fromDay: string): Promise<DailyActivity[]> {
    checkDay(fromDay, 'fromDay');
    return this.guard('read', async () => {
      const days = await this.scan(activityKeys.days(agentId), (entry) => {
        const stored = entry.json<StoredDay>();
        return stored.agentId === agentId && stored.day >= fromDay ? { day: stored.day, ...countsOf(stored) } : undefined;
      });
      return days.map(({ item }) => item).sort(byDay);
    });
  }

  async deleteAgent(agentId: string): Promise<void> {
    await this.guard('deleteAgent', () => this.purgeAll(activityKeys.days(agentId)));
  }

  /**
   * Scans every agent's days and purges the revisions seen before `beforeDay`: a day that
   * an `add` changed since the scan survives (the purge takes only older messages) and is
   * not counted.
   */
  async prune(beforeDay: string): Promise<number> {
    checkDay(beforeDay, 'beforeDay');
    return this.guard('prune', () => this.pruneOld(activityKeys.days(), (entry) => entry.json<StoredDay>().day < beforeDay));
  }
}

/** The counts a stored day holds, every name present (a day an older version wrote lacks the newer ones). */
function countsOf(stored: Partial<ActivityIncrement> | undefined): ActivityIncrement {
  const counts = emptyCounts();
  for (const name of ACTIVITY_COUNTS) {
    const value = stored?.[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) counts[name] = value;
  }
  return counts;
}

function checkDay(value: string, name: string): void {
  const problem = dayProblem(value, name);
  if (problem) throw new EngramError('invalid_request', problem);
}
