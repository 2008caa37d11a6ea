/**
 * Housekeeping that keeps a long-running server's file from growing without bound:
 * conversation state (blocks to re-apply, extraction watermark) is dropped once a
 * conversation has been idle for `conversationTtlMs`. Providers' prompt caches expire
 * within hours, so an old conversation that resumes loses nothing worth keeping; what
 * was learnt from it stays in the reflection store. Recorded responses (Responses chains)
 * older than the same time are dropped too, as the OpenAI API drops its own. Expired
 * dashboard sessions and OAuth grants that can no longer be used go as they end, OAuth
 * clients that never completed a sign-in a day (`UNUSED_CLIENT_GRACE_MS`) after
 * registering (registration is open to anyone), agents' daily activity counts once
 * they are more than `ACTIVITY_KEEP_DAYS` old, and request log entries once they are
 * older than `ENGRAM_REQUEST_LOG_DAYS`.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.js';
import { dayOf } from '../observability/activity.js';
import { UNUSED_CLIENT_GRACE_MS } from '../domain/account-records.js';

/** Daily counts kept: the dashboard shows two weeks; a year and a bit allows comparing with last year. */
export const ACTIVITY_KEEP_DAYS = 400;
const DAY_MS = 24 * 3600_000;

const EVERY_MS = 60 * 60 * 1000;
const FIRST_AFTER_MS = 60 * 1000;

export interface MaintenanceOptions {
  deps: Deps;
  /** First run this long after start, then every `everyMs` (defaults: a minute, an hour). */
  firstAfterMs?: number;
  everyMs?: number;
}

export const maintenancePlugin: FastifyPluginAsync<MaintenanceOptions> = async (app, { deps, firstAfterMs = FIRST_AFTER_MS, everyMs = EVERY_MS }) => {
  const prune = async () => {
    try {
      const before = deps.now() - deps.config.conversationTtlMs;
      const pruned = await deps.control.conversations.prune(before);
      const responses = await deps.control.responses.prune(before);
      const accounts = await deps.accounts.store.prune(deps.now());
      const unusedClients = await deps.accounts.store.pruneClients(deps.now() - UNUSED_CLIENT_GRACE_MS);
      const activityDays = await deps.control.activity.prune(dayOf(deps.now() - ACTIVITY_KEEP_DAYS * DAY_MS));
      const requests = await deps.control.requests.prune(deps.now() - deps.config.requestLogMs);
      if (pruned > 0 || responses > 0 || accounts > 0 || unusedClients > 0 || activityDays > 0 || requests > 0) {
        app.log.info(
          { pruned, responses, accounts, unusedClients, activityDays, requests },
          'idle conversations, old responses, ended sessions and grants, OAuth clients never used, old activity counts and request log entries pruned',
        );
      }
    } catch (error) {
      app.log.error({ err: error }, 'pruning idle conversations failed');
    }
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setTimeout(function run() {
      void prune().finally(() => {
        timer = setTimeout(run, everyMs).unref();
      });
    }, firstAfterMs).unref();
  });
  app.addHook('onClose', async () => clearTimeout(timer));
};
