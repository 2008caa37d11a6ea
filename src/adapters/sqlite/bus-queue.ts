/**
 * The storage half of the SQLite event bus: every state change of a message is one
 * short transaction, so several consumers (in this process or another one on the same
 * file) never lease the same delivery twice.
 *
 * A message row is deliverable when `due_at <= now`. Leasing it increments `attempts`
 * and moves `due_at` to the lease expiry, so a delivery that is never settled (handler
 * hung, process crashed) simply becomes due again: redelivery needs no extra state.
 *
 * A lease also names its holder (`LeaseHolder`: one process start). A crashed holder's
 * leases would only come due at their expiry, a whole ack wait after the crash; a server
 * restarted on the file calls `reclaim` to make them due at once.
 */
import { exhaustedReason, type DeadLetter, type QueuedMessage } from '../../ports/event-bus.js';
import type { SqliteDatabase } from './database.js';

export interface LeasedRow {
  seq: number;
  subject: string;
  payload: string;
  published_at: number;
  /** Deliveries so far, this one included. */
  attempts: number;
  /** Why the last failed delivery failed (null when none failed, or gave no reason). */
  last_error: string | null;
}

interface DeadLetterRow {
  seq: number;
  subject: string;
  payload: string;
  attempts: number;
  reason: string;
  last_error: string | null;
  published_at: number;
  failed_at: number;
}

/** Who holds a lease: one start of one process. */
export interface LeaseHolder {
  /** Unique per process start: a restart that gets the same pid is still another holder. */
  id: string;
  pid: number;
  host: string;
}

interface QueuedRow {
  seq: number;
  subject: string;
  payload: string;
  published_at: number;
  due_at: number;
  attempts: number;
  lease_owner: string | null;
  last_error: string | null;
}

interface HeldRow {
  lease_owner: string;
  lease_pid: number;
}

export class BusQueue {
  readonly #db: SqliteDatabase;
  readonly #sql;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO bus_messages (subject, msg_id, payload, published_at, due_at, supersede_key) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      // Only a message still waiting: never delivered, not leased, not yet due. The planner
      // would otherwise take the (subject, due_at) index and walk every waiting message.
      supersede: db.prepare(
        `DELETE FROM bus_messages INDEXED BY bus_messages_supersede
         WHERE subject = ? AND supersede_key = ? AND attempts = 0 AND lease_owner IS NULL AND due_at > ?`,
      ),
      due: db.prepare<[string, number, number], LeasedRow>(
        `SELECT seq, subject, payload, published_at, attempts, last_error FROM bus_messages
         WHERE subject = ? AND due_at <= ? ORDER BY due_at, seq LIMIT ?`,
      ),
      lease: db.prepare(
        'UPDATE bus_messages SET attempts = attempts + 1, due_at = ?, lease_owner = ?, lease_pid = ?, lease_host = ? WHERE seq = ?',
      ),
      extend: db.prepare('UPDATE bus_messages SET due_at = ? WHERE seq = ? AND attempts = ?'),
      ack: db.prepare('DELETE FROM bus_messages WHERE seq = ?'),
      attempts: db.prepare<[number], { attempts: number }>('SELECT attempts FROM bus_messages WHERE seq = ?'),
      retry: db.prepare(
        'UPDATE bus_messages SET due_at = ?, last_error = ?, lease_owner = NULL, lease_pid = NULL, lease_host = NULL WHERE seq = ? AND attempts = ?',
      ),
      holders: db.prepare<[string, string, number], HeldRow>(
        `SELECT DISTINCT lease_owner, lease_pid FROM bus_messages
         WHERE lease_host = ? AND lease_owner IS NOT NULL AND lease_owner <> ? AND due_at > ?`,
      ),
      release: db.prepare(
        `UPDATE bus_messages SET due_at = ?, lease_owner = NULL, lease_pid = NULL, lease_host = NULL
         WHERE lease_owner = ? AND due_at > ?`,
      ),
      // The last error given, else the one the message kept from an earlier delivery.
      copyDead: db.prepare(
        `INSERT OR REPLACE INTO bus_dead_letters (seq, subject, payload, attempts, reason, last_error, published_at, failed_at)
         SELECT seq, subject, payload, attempts, ?, COALESCE(?, last_error), published_at, ? FROM bus_messages WHERE seq = ?`,
      ),
      nextDue: db.prepare<[string], { next: number | null }>(
        'SELECT MIN(due_at) AS next FROM bus_messages WHERE subject = ?',
      ),
      pending: db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM bus_messages WHERE subject = ?'),
      queued: db.prepare<[string, number], QueuedRow>(
        `SELECT seq, subject, payload, published_at, due_at, attempts, lease_owner, last_error FROM bus_messages
         WHERE subject = ? ORDER BY seq LIMIT ?`,
      ),
      deadOne: db.prepare<[number], DeadLetterRow>('SELECT * FROM bus_dead_letters WHERE seq = ?'),
      deleteDead: db.prepare('DELETE FROM bus_dead_letters WHERE seq = ?'),
      deadAll: db.prepare<[], DeadLetterRow>('SELECT * FROM bus_dead_letters ORDER BY failed_at, seq'),
      deadBySubject: db.prepare<[string], DeadLetterRow>(
        'SELECT * FROM bus_dead_letters WHERE subject = ? ORDER BY failed_at, seq',
      ),
    };
  }

  /** False once the shared database handle has been closed. */
  get open(): boolean {
    return this.#db.open;
  }

  /**
   * False when a message with the same `msgId` is still stored on the subject. With a
   * `supersedes` key, the waiting message it supersedes is removed first (in the caller's
   * transaction: the two happen together or not at all).
   */
  publish(subject: string, payload: string, msgId: string | null, now: number, dueAt: number, supersedes: string | null = null): boolean {
    if (supersedes !== null) this.#sql.supersede.run(subject, supersedes, now);
    return this.#sql.insert.run(subject, msgId, payload, now, dueAt, supersedes).changes > 0;
  }

  /**
   * Leases up to `max` due messages. A message due for delivery number
   * `maxDeliver + 1` (its last delivery was never settled) becomes a dead letter instead
   * and is not returned.
   */
  lease(subject: string, max: number, now: number, ackWaitMs: number, maxDeliver: number, holder: LeaseHolder): LeasedRow[] {
    // IMMEDIATE: take the write lock before reading, so two consumers cannot both see
    // the same due row.
    return this.#db
      .transaction(() => {
        const leased: LeasedRow[] = [];
        while (leased.length < max) {
          const due = this.#sql.due.all(subject, now, max - leased.length);
          if (due.length === 0) break;
          for (const row of due) {
            if (row.attempts >= maxDeliver) {
              this.#bury(row.seq, exhaustedReason(row.attempts, row.last_error ?? undefined, true), null, now);
            } else {
              this.#sql.lease.run(now + ackWaitMs, holder.id, holder.pid, holder.host, row.seq);
              leased.push({ ...row, attempts: row.attempts + 1 });
            }
          }
        }
        return leased;
      })
      .immediate();
  }

  ack(seq: number): void {
    this.#sql.ack.run(seq);
  }

  /**
   * Due again at `dueAt`, keeping why delivery `attempt` failed (null: no reason given),
   * unless the message was redelivered since (a stale nak is ignored).
   */
  retry(seq: number, attempt: number, dueAt: number, reason: string | null): void {
    this.#sql.retry.run(dueAt, reason, seq, attempt);
  }

  /** The lease of delivery `attempt` now expires at `dueAt` (a heartbeat); its holder keeps it. */
  extend(seq: number, attempt: number, dueAt: number): void {
    this.#sql.extend.run(dueAt, seq, attempt);
  }

  /**
   * Makes due now every lease held on this host by another process start that is gone:
   * one whose pid is not alive, or whose pid is `self`'s own (the pid was reused, so its
   * holder has exited). Leases held on other hosts are left to expire: whether their
   * holder lives cannot be told from here. Attempts are kept, so a job that crashes its
   * server every time still ends as a dead letter. Returns how many were reclaimed.
   */
  reclaim(self: LeaseHolder, isAlive: (pid: number) => boolean, now: number): number {
    return this.#db
      .transaction(() => {
        let reclaimed = 0;
        for (const held of this.#sql.holders.all(self.host, self.id, now)) {
          if (held.lease_pid === self.pid || !isAlive(held.lease_pid)) {
            reclaimed += this.#sql.release.run(now, held.lease_owner, now).changes;
          }
        }
        return reclaimed;
      })
      .immediate();
  }

  /**
   * Moves the message to the dead letters, unless it was redelivered since `attempt`.
   * `lastError`: the failed delivery's own reason (null: the one an earlier delivery left).
   */
  term(seq: number, attempt: number, reason: string, lastError: string | null, now: number): void {
    this.#db
      .transaction(() => {
        const row = this.#sql.attempts.get(seq);
        if (row && row.attempts === attempt) this.#bury(seq, reason, lastError, now);
      })
      .immediate();
  }

  /** Publishes a dead letter's payload again as a fresh message and removes the dead letter. */
  retryDead(seq: number, now: number): { subject: string } | undefined {
    return this.#db
      .transaction(() => {
        const dead = this.#sql.deadOne.get(seq);
        if (!dead) return undefined;
        this.#sql.insert.run(dead.subject, null, dead.payload, now, now, null);
        this.#sql.deleteDead.run(seq);
        return { subject: dead.subject };
      })
      .immediate();
  }

  nextDueAt(subject: string): number | undefined {
    return this.#sql.nextDue.get(subject)?.next ?? undefined;
  }

  /**
   * Stored messages of the subject, oldest first. A delivered one has `attempts > 0`; a
   * failed one has given its lease back (`retry`) and waits for `due_at`.
   */
  queued(subject: string, now: number, limit: number): QueuedMessage[] {
    return this.#sql.queued.all(subject, limit).map((row) => ({
      id: String(row.seq),
      subject: row.subject,
      payload: parsePayload(row.payload),
      publishedAt: row.published_at,
      attempts: row.attempts,
      ...(row.last_error === null ? {} : { lastError: row.last_error }),
      ...queuedState(row, now),
    }));
  }

  pending(subject: string): number {
    return this.#sql.pending.get(subject)?.n ?? 0;
  }

  deadLetters(subject?: string): DeadLetter[] {
    const rows = subject === undefined ? this.#sql.deadAll.all() : this.#sql.deadBySubject.all(subject);
    return rows.map((row) => ({
      id: String(row.seq),
      subject: row.subject,
      payload: parsePayload(row.payload),
      attempts: row.attempts,
      reason: row.reason,
      ...(row.last_error === null ? {} : { lastError: row.last_error }),
      publishedAt: row.published_at,
      failedAt: row.failed_at,
    }));
  }

  /** Callers hold a transaction. */
  #bury(seq: number, reason: string, lastError: string | null, now: number): void {
    this.#sql.copyDead.run(reason, lastError, now, seq);
    this.#sql.ack.run(seq);
  }
}

function queuedState(row: QueuedRow, now: number): Pick<QueuedMessage, 'state' | 'dueAt'> {
  if (row.attempts === 0) return row.due_at > now ? { state: 'waiting', dueAt: row.due_at } : { state: 'ready' };
  // Released after a failed delivery, and not leased again yet: still waiting to be
  // redelivered, with its last attempt, even once its due time has passed (a consumer busy
  // or asleep until then). Not `delivered`: no handler has it.
  if (row.lease_owner === null) return { state: 'retrying', dueAt: row.due_at };
  return { state: 'delivered' };
}

/** Stored payloads are JSON we wrote; a damaged one is surfaced as its raw text. */
export function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
