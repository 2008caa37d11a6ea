/**
 * How many log-in attempts the dashboard takes, and from whom. Keyed so that failures from
 * one address cannot lock other people out: the tight limit is per address and account
 * (a guesser at one address gets 10 tries at an account, then 5 a minute), an address has
 * a wider one across every account it tries (credential stuffing from one place), and an
 * account has a softer one across every address (a guesser spread over many addresses is
 * still bounded). Only that last can refuse the account's owner at their own address,
 * and only after far more failures than one address may make.
 *
 * An attempt counts only when every limit lets it through, so attempts refused with 429
 * do not push anyone's wait further out. Limits are per replica (DESIGN section 11).
 */
import { RateLimiter, type RateLimit } from './rate-limits.js';

/** The limits, exported for the tests and the README's numbers. */
export const LOG_IN_LIMITS = {
  perAddressAndAccount: { perMinute: 5, burst: 10 },
  perAddress: { perMinute: 20, burst: 30 },
  perAccount: { perMinute: 30, burst: 60 },
} satisfies Record<string, RateLimit>;

export class LogInLimits {
  readonly #byAddressAndAccount: RateLimiter;
  readonly #byAddress: RateLimiter;
  readonly #byAccount: RateLimiter;

  constructor(now: () => number = Date.now) {
    this.#byAddressAndAccount = new RateLimiter(LOG_IN_LIMITS.perAddressAndAccount, now);
    this.#byAddress = new RateLimiter(LOG_IN_LIMITS.perAddress, now);
    this.#byAccount = new RateLimiter(LOG_IN_LIMITS.perAccount, now);
  }

  /**
   * Counts one attempt at `account` (the normalised email, whether or not it has an
   * account) from `address`: 0 when it may go, else the milliseconds to wait.
   */
  take(address: string, account: string): number {
    const keys: Array<[RateLimiter, string]> = [
      [this.#byAddressAndAccount, `${address}\n${account}`],
      [this.#byAddress, address],
      [this.#byAccount, account],
    ];
    const wait = Math.max(...keys.map(([limiter, key]) => limiter.wait(key)));
    if (wait > 0) return wait;
    for (const [limiter, key] of keys) limiter.take(key);
    return 0;
  }
}
