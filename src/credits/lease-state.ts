// What a Postgres API process keeps in memory of its credit leases and the calls they hold
// (postgres-meter-store.ts).
import type { ChargeInfo, SettleTarget } from './meter-store.js';

/** What this process holds of one account. */
export interface AccountLease {
  accountId: string;
  /** Credits our lease row holds, as far as this process knows (it changes only through us). */
  leased: number;
  /** Held by calls in flight (never more than leased). */
  held: number;
  /** The next lease's size, in credits. */
  chunk: number;
  lastLeaseAt: number;
  lastUsedAt: number;
  contendedUntil: number;
  /** A slice leased ahead of need was refused: none is tried again before this. */
  noPrefetchUntil: number;
  /** The extension in flight is a slice leased ahead of need (prefetch), not a call's. */
  prefetching: boolean;
  /** The lease is being extended: other calls short of credits wait for it. */
  extending: Promise<Refusal | undefined> | undefined;
  /** The row was swept (this process stalled beyond its lease): holds on it are charged directly. */
  lost: boolean;
}

export interface Hold {
  lease: AccountLease;
  amount: number;
  /** Neither settled nor released yet. */
  open: boolean;
}

/** Why a lease could not be extended: what `need` found available. */
export interface Refusal {
  need: number;
  available: number;
}

export interface PendingCharge {
  hold: Hold;
  info: ChargeInfo;
  to: SettleTarget;
}

export interface LeaseAttempt {
  granted: boolean;
  free: number;
  waiting: number;
  expired: number;
  others: number;
}
