import { Histogram } from '../domain/histogram.js';

/** Why a process gave credits of a lease back to its account. */
export type GiveBackReason = 'asked' | 'idle' | 'close';

/**
 * What Postgres metering did in this process, as plain numbers (read by /metrics, see
 * watchMeter in src/http/metrics.ts). Counted per statement, not per call, except the two call
 * counters, which count only calls off the fast path. Enough to tell, from outside, whether calls
 * wait for leases, how often the process leases and gives back, and what a group charge costs.
 */
export class MeterStats {
  /** Lease statements, by purpose and outcome: `ahead` leases the next slice while the current one lasts; `call` is one a call waits for. */
  readonly leases = { ahead: { granted: 0, refused: 0 }, call: { granted: 0, refused: 0 } };
  /** Time of each lease statement, both purposes. */
  readonly leaseSeconds = new Histogram();
  /** Calls that found their process's slice short and waited for a lease statement. */
  callsWaited = 0;
  /** Calls the meter refused (402): the credits were not there after the other holders answered. */
  callsRefused = 0;
  /** Times this process asked the account's other holders to give back. */
  asks = 0;
  /** Give-back statements, by reason. */
  readonly givenBack: Record<GiveBackReason, number> = { asked: 0, idle: 0, close: 0 };
  /** Expired leases (of processes that stopped) this process swept back into their accounts. */
  leasesSwept = 0;

  /** Counts `n` leases swept; answers `n`. */
  swept(n: number): number {
    this.leasesSwept += n;
    return n;
  }
  /** This process's own leases found swept (it stalled beyond CREDIT_LEASE_SECONDS). */
  leasesLost = 0;
  /** Time of each group charge statement that committed. */
  readonly groupSeconds = new Histogram();
  /** Charges committed by group statements (charges a group = this over groupSeconds.count). */
  groupCharges = 0;
  /** Group statements that failed, writing nothing: a lease of the group was swept (its calls are then charged directly), or Postgres failed (its calls answer the error, uncharged). */
  groupFailures = 0;
  /** Group statements Postgres chose as a deadlock's victim (written nothing, sent again; each cost a `deadlock_timeout`). */
  groupDeadlocks = 0;
  /** Charges whose lease was gone, charged from the available balance one at a time. */
  directCharges = 0;
  /**
   * Calls whose charge's answer from Postgres was lost (the connection failed after the statement was
   * sent), by what the ledger then said: `charged` (answered as such), `notCharged` (answered with
   * the failure), `unknown` (Postgres could not be asked in time: answered with the failure, and
   * possibly charged; reconcile by the request id in the ledger).
   */
  readonly lostAnswers = { charged: 0, notCharged: 0, unknown: 0 };
  /** Those `unknown` calls since: refunded (their charge had committed), found not charged, and not settled yet (refunds.ts). */
  readonly lostCharges = { refunded: 0, notCharged: 0, pending: 0 };
  /** Times this process settled what statements with lost answers did (every lease given back from the ledger). */
  settled = 0;
  /** What is leased now: accounts with a lease, and credits leased that no call holds. */
  now: () => { accounts: number; unheld: number } = () => ({ accounts: 0, unheld: 0 });
}
