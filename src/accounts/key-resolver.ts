// API keys to their records, for the key check of every keyed route.
import type { AuthRecord, MeterStore } from '../credits/meter-store.js';
import { TurnMemo } from '../db/turn-memo.js';
import { hashApiKey, isWellFormedKey } from './api-keys.js';

/** A key's lookup as known now: `record` undefined for a key that does not exist. */
export interface KnownKey {
  readonly record: AuthRecord | undefined;
  /** Postgres: when the entry must be looked up again (ms since the epoch). */
  readonly until: number;
}

const UNKNOWN: KnownKey = { record: undefined, until: Infinity };

export interface KeyResolverOptions {
  /**
   * Where lookups are not synchronous (Postgres), how long a lookup is reused. A key revoked by any
   * process is refused by every other one at most this long after.
   */
  cacheMs: number;
  /** Entries kept at most (oldest dropped first). */
  maxEntries?: number;
  now?: () => number;
}

/** How long a key found valid vouches for its requests from an address that is blocked (see vouched()). */
export const VOUCH_MS = 60 * 60_000;
/** Keys remembered as valid at most (oldest dropped first). */
const MAX_VOUCHED = 10_000;
/** A remembered key's time is renewed at most this often (so a busy key costs no map write per turn). */
const VOUCH_RENEW_MS = 60_000;

/**
 * Resolves API keys to their records. Where the store reads synchronously (SQLite), one lookup per
 * key per event-loop turn (see TurnMemo): a revocation by any process is seen on the next turn.
 * Otherwise (Postgres), lookups are kept for `cacheMs` in the process, so the hot path makes no
 * round trip: a revocation anywhere is seen everywhere within `cacheMs` (1 s at most by default).
 */
export class KeyResolver {
  private readonly turn = new TurnMemo<string, KnownKey>();
  private readonly cache = new Map<string, KnownKey>();
  private readonly inFlight = new Map<string, Promise<AuthRecord | undefined>>();
  /** Keys a lookup found valid, with when it last did (see vouched()). */
  private readonly valid = new Map<string, number>();
  private readonly cacheMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly lookupSync = (key: string): KnownKey => {
    if (!isWellFormedKey(key)) return UNKNOWN;
    const record = this.meter.findKeySync!(hashApiKey(key));
    this.noteValidity(key, record);
    return { record, until: Infinity };
  };

  constructor(
    private readonly meter: Pick<MeterStore, 'findKey' | 'findKeySync'>,
    opts: KeyResolverOptions = { cacheMs: 500 },
  ) {
    this.cacheMs = opts.cacheMs;
    this.maxEntries = opts.maxEntries ?? 100_000;
    this.now = opts.now ?? Date.now;
  }

  /**
   * The fast path, called from one place (the auth hook): the key's lookup when it is known without
   * waiting, else undefined (then call resolve()).
   */
  known(key: string): KnownKey | undefined {
    if (this.meter.findKeySync) return this.turn.get(key, this.lookupSync);
    const k = this.cache.get(key);
    if (k && k.until > this.now()) return k;
    return undefined;
  }

  async resolve(key: string): Promise<AuthRecord | undefined> {
    const k = this.known(key);
    if (k) return k.record;
    if (!isWellFormedKey(key)) return undefined;
    // Concurrent requests with one key share one lookup.
    let p = this.inFlight.get(key);
    if (!p) {
      const started = this.now();
      p = this.meter.findKey(hashApiKey(key)).then(
        (record) => {
          this.inFlight.delete(key);
          this.noteValidity(key, record);
          this.remember(key, { record, until: started + this.cacheMs });
          return record;
        },
        (err: unknown) => {
          this.inFlight.delete(key);
          throw err;
        },
      );
      this.inFlight.set(key, p);
    }
    return p;
  }

  /**
   * Whether a lookup in this process found the key valid within the last hour (VOUCH_MS). The
   * per-address guard lets such a key through an address it blocks for failed keys: a valid key
   * behind the same NAT as a key guesser is still served, while the guesser's new keys are refused
   * without a lookup. Answered from memory, never from the store; the key is then looked up as
   * usual, so one revoked since is refused.
   */
  vouched(key: string): boolean {
    const t = this.valid.get(key);
    return t !== undefined && this.now() - t < VOUCH_MS;
  }

  /** Called with every lookup's result (once per key per turn on SQLite, per cacheMs on Postgres). */
  private noteValidity(key: string, record: AuthRecord | undefined): void {
    if (!record || record.revoked) {
      this.valid.delete(key);
      return;
    }
    const now = this.now();
    const last = this.valid.get(key);
    if (last !== undefined && now - last < VOUCH_RENEW_MS) return;
    // Deleted and set again so that the map's order is the order of last use, oldest first.
    this.valid.delete(key);
    if (this.valid.size >= MAX_VOUCHED) this.valid.delete(this.valid.keys().next().value as string);
    this.valid.set(key, now);
  }

  private remember(key: string, k: KnownKey): void {
    this.cache.delete(key);
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, k);
  }

  /** Called when this process changes a key, so even a request in the same turn sees it. */
  forget(): void {
    this.turn.clear();
    this.cache.clear();
  }
}
