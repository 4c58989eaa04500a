// The per-request hot path of metering: key lookup, hold, settle, release. Two implementations:
// sqlite-meter-store.ts (holds in the process, charges group-committed with the store's other writes)
// and postgres-meter-store.ts (each process leases slices of a balance, charges committed in groups).
// Both answer a hold from the process's memory when they can: `tryReserveSync` is that fast path,
// called from one place (the metered route); everyone else uses the plain async methods.
import { AppError } from '../errors/app-error.js';
import type { MeterStats } from './meter-stats.js';
import type { LostCharges } from './refunds.js';

export interface AuthRecord {
  keyId: string;
  accountId: string;
  planId: string;
  balance: number;
  rateLimitPerMinute: number | null;
  revoked: boolean;
  /** The account's keys not revoked (this one included, unless revoked). */
  activeKeys: number;
}

/**
 * A hold, as the store that made it knows it: an object of this process (holds never leave it),
 * settled or released at most once. Not an id in a Map: a long-lived Map that takes and drops an
 * entry per call has V8 allocate each rehashed table in the old generation, and the tables it drops
 * keep their entries alive until a full collection (see docs/benchmarks.md, 2026-11-27).
 */
export interface Reservation {
  readonly [reservationBrand]: true;
}
declare const reservationBrand: unique symbol;

export type ReserveResult = { ok: true; reservationId: Reservation } | { ok: false; available: number };

export interface ChargeInfo {
  requestId: string;
  keyId: string | null;
  endpoint: string;
}

export interface Charged {
  charged: number;
  balance: number;
}

/** Where a settle's outcome goes, once (see MeterStore.settleTo): one object, no promise or closures. */
export interface SettleTarget {
  settled(r: Charged | undefined): void;
  failed(err: unknown): void;
}

/** A SettleTarget that resolves a promise: what `settle` hands the stores' `settleTo`. */
export function settlePromise(settleTo: (to: SettleTarget) => void): Promise<Charged | undefined> {
  return new Promise((resolve, reject) => settleTo({ settled: resolve, failed: reject }));
}

export interface MeterStore {
  findKey(keyHash: string): Promise<AuthRecord | undefined>;
  /**
   * The key lookup without waiting, where the store can read synchronously (SQLite). Used only by
   * KeyResolver.
   */
  findKeySync?(keyHash: string): AuthRecord | undefined;
  /** Holds `amount` credits if the available balance covers it. */
  reserve(accountId: string, amount: number): Promise<ReserveResult>;
  /**
   * The hold decided without waiting when the process can (SQLite: always; Postgres: when this
   * process's lease covers it); undefined means "ask reserve()". Used only by the metered route.
   */
  tryReserveSync?(accountId: string, amount: number): ReserveResult | undefined;
  /**
   * Turns a hold into a charge with its ledger entry; undefined if the hold is gone (settled or
   * released). Rejects with insufficient_credits if another process spent the credits meanwhile.
   * Resolves only once the charge and its ledger entry are committed.
   */
  settle(reservationId: Reservation, info: ChargeInfo): Promise<Charged | undefined>;
  /** `settle`, its outcome given to `to` instead of a promise (the metered route's hot path). */
  settleTo(reservationId: Reservation, info: ChargeInfo, to: SettleTarget): void;
  /** Frees a hold without charging; false if it was already settled or released. */
  release(reservationId: Reservation): Promise<boolean>;
  balance(accountId: string): Promise<number | undefined>;
  /**
   * Credits this process's calls in progress hold for the account. A call refused while the balance
   * covers it waits only for these (hold-wait.ts): other processes' leases are asked back by
   * reserve() itself, and a killed process's are not freed by waiting a few seconds.
   */
  heldHere(accountId: string): number;
  /** Work the store does in the background (expired leases); every API process runs it. */
  sweep?(): Promise<number>;
  /** What the store did in this process, for /metrics (Postgres leases and group charges). */
  readonly stats?: MeterStats;
  /** Calls answered with a failure whose charge may have committed (Postgres), refunded by serve.ts's refunder (refunds.ts). */
  readonly lostCharges?: LostCharges;
  /** Gives back what this process holds for no call (Postgres leases); the store stays usable. */
  close?(): Promise<void>;
}

export function checkAmount(amount: number): void {
  if (!Number.isInteger(amount) || amount <= 0) throw new Error(`reserve: amount must be a positive integer, got ${amount}`);
}

/**
 * The 402. `balance` is the account's; `available` what calls in progress leave of it (their holds),
 * which is what refused the call when the two differ: then the message says so, and that retrying
 * once those calls end may pass (a call that fails is not charged and frees its hold).
 */
export function insufficientCredits(required: number, balance: number, available = balance): AppError {
  const held = balance - available;
  const message =
    held > 0
      ? `This call costs ${required} credits; your balance is ${balance}, of which ${held} are held for calls still in progress (on a deployment of several gateway processes, possibly by one that stopped, until its lease expires), so ${available} are available now. Retry once those calls end (a call that fails is not charged).`
      : `This call costs ${required} credits and your balance is ${balance}.`;
  return new AppError('insufficient_credits', message, { required, balance, available });
}

/** An API key's row joined with its account, as both stores select it. */
export interface KeyRow {
  keyId: string;
  accountId: string;
  revokedAt: string | null;
  planId: string;
  balance: number;
  rateLimitPerMinute: number | null;
  /** A count (Postgres answers it as a string; a subquery's type is nullable to Kysely). */
  activeKeys: number | string | null;
}

export const toAuth = (r: KeyRow): AuthRecord => ({
  keyId: r.keyId,
  accountId: r.accountId,
  planId: r.planId,
  balance: Number(r.balance),
  rateLimitPerMinute: r.rateLimitPerMinute,
  revoked: r.revokedAt !== null,
  activeKeys: Number(r.activeKeys),
});
