// Per-address limit on requests that fail authentication (no key, unknown or revoked key). Failures
// are counted in the shared rate limiter (one bucket per address, an IPv6 /64 counting as one:
// address-key.ts); an address that ran out is also
// remembered in this process until its retry time, so its next requests answer 429 before any key
// lookup touches the store.
import { AppError } from '../errors/app-error.js';
import type { RateLimiter } from './rate-limiter.js';
import { addressKey } from './address-key.js';

/** Addresses remembered as blocked at most. */
const MAX_BLOCKED = 100_000;

export class IpGuard {
  private readonly blockedUntil = new Map<string, number>();
  /** When the addresses whose block has ended are next dropped (at most once a second). */
  private nextPrune = 0;
  constructor(
    private readonly limiter: RateLimiter,
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Whether any address is blocked now or was within the last second or so: when not, check() has
   * nothing to do, and the auth hook does not read the request's address at all.
   */
  get blocking(): boolean {
    return this.blockedUntil.size > 0;
  }

  /** Throws rate_limited when the address is still blocked; cheap, synchronous, no store access. */
  check(address: string): void {
    const ip = addressKey(address);
    const now = this.now();
    // Blocks that ended are dropped from time to time, so `blocking` turns false once an attack is
    // over even if its addresses never come back.
    if (now >= this.nextPrune) {
      this.nextPrune = now + 1000;
      for (const [addr, until] of this.blockedUntil) if (now >= until) this.blockedUntil.delete(addr);
    }
    const until = this.blockedUntil.get(ip);
    if (until === undefined) return;
    if (now >= until) {
      this.blockedUntil.delete(ip);
      return;
    }
    throw this.limited(Math.max(1, Math.ceil((until - now) / 1000)));
  }

  /** Counts a failed authentication; answers the error to send: the 401 itself, or 429 once out of budget. */
  async failed(address: string, authError: AppError): Promise<AppError> {
    const ip = addressKey(address);
    const d = await this.limiter.take(`auth-fail:${ip}`, this.perMinute);
    if (d.allowed) return authError;
    // Bounded: the longest-blocked address goes first (clearing them all lifted every block at once).
    this.blockedUntil.delete(ip);
    if (this.blockedUntil.size >= MAX_BLOCKED) this.blockedUntil.delete(this.blockedUntil.keys().next().value as string);
    this.blockedUntil.set(ip, this.now() + d.retryAfterSeconds * 1000);
    return this.limited(d.retryAfterSeconds);
  }

  private limited(retryAfterSeconds: number): AppError {
    return new AppError(
      'rate_limited',
      `Too many requests without a valid API key from this address; retry in ${retryAfterSeconds} s.`,
      { scope: 'ip', retryAfterSeconds },
      // The address's budget, as a keyed call's 429 describes the account's.
      { 'retry-after': String(retryAfterSeconds), 'ratelimit-limit': String(this.perMinute), 'ratelimit-remaining': '0', 'ratelimit-reset': String(retryAfterSeconds) },
    );
  }
}
