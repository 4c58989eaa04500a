// Statements of Postgres metering whose answer was lost: the connection failed after one was sent,
// so the process cannot tell whether it committed. Until that is settled no group charge goes and no
// spending is folded in (postgres-meter-store.ts); settling is one statement (LeaseStatements.
// settleOwn) that changes the process's epoch, reads which charges of a lost group committed, and
// gives back every lease of the process exactly, from the ledger.
import { AppError } from '../errors/app-error.js';
import { outcomeUnknown, type SettledOwn } from './lease-statements.js';
import type { SettleTarget } from './meter-store.js';
import type { LostCharges } from './refunds.js';

/** A group charge whose answer was lost: its accounts and the time its entries carry, to find them by. */
export interface LostGroup {
  accountIds: string[];
  createdAt: string;
}

/** How long a call whose charge's answer was lost waits for it to be settled, before it is answered with the failure. */
export const SETTLE_WAIT_MS = 5_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LostAnswers {
  private lost = 0;
  private settled = 0;
  /** The settlement under way, if any; while it is, no statement is sent (`gate`). */
  private settling: Promise<boolean> | undefined;
  private gate: Promise<void> | undefined;
  /** Statements sent and not answered: a settlement waits for them. */
  private inFlight = 0;
  /** Why the last attempt to settle failed (Postgres could not be reached, mostly). */
  lastFailure: unknown;

  constructor(
    private readonly settleOwn: (group: LostGroup | undefined) => Promise<SettledOwn>,
    /** Called with what a settlement did, before it counts as done (the leases it gave back). */
    private readonly onSettled: (r: SettledOwn) => void,
  ) {}

  /** Whether a statement's answer was lost and is not settled yet. */
  get unsettled(): boolean {
    return this.lost > this.settled;
  }

  /**
   * Sends one statement that writes the process's leases or charges: not while a settlement is under
   * way (it would race with it), and if its answer is lost, counted for the next settlement.
   */
  async statement<T>(send: () => Promise<T>): Promise<T> {
    while (this.gate) await this.gate;
    this.inFlight++;
    try {
      return await send();
    } catch (err) {
      if (outcomeUnknown(err)) this.lost++;
      throw err;
    } finally {
      this.inFlight--;
    }
  }

  /**
   * One attempt to settle: true when settled (or nothing was to be). With `group`, always an attempt
   * of its own, and the group's charges that committed go into `charged` (balance after, by request
   * id). The statements already sent end first and none is sent meanwhile, so that no lease is
   * granted or given back unseen around it.
   */
  async settle(group?: LostGroup, charged?: Map<string, number>): Promise<boolean> {
    if (!group) {
      if (!this.unsettled) return true;
      if (this.settling) return this.settling;
    }
    while (this.settling) await this.settling;
    let open!: () => void;
    this.gate = new Promise((r) => (open = r));
    const attempt = (async () => {
      try {
        while (this.inFlight > 0) await sleep(5);
        const upTo = this.lost;
        const r = await this.settleOwn(group);
        this.onSettled(r);
        for (const [id, balance] of r.charged) charged?.set(id, balance);
        this.settled = Math.max(this.settled, upTo);
        return true;
      } catch (err) {
        this.lastFailure = err;
        return false;
      } finally {
        this.gate = undefined;
        this.settling = undefined;
        open();
      }
    })();
    this.settling = attempt;
    return attempt;
  }

  /** What a lost group did, retried for SETTLE_WAIT_MS: its committed charges by request id, or undefined if Postgres could not be asked in time. */
  async settleGroup(group: LostGroup): Promise<Map<string, number> | undefined> {
    const charged = new Map<string, number>();
    const ok = await retried(() => this.settle(group, charged).then((done) => (done ? true : undefined)));
    return ok ? charged : undefined;
  }
}

/** `attempt` until it gives a value or throws no more, for SETTLE_WAIT_MS; undefined if it never did. */
export async function retried<T>(attempt: () => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = Date.now() + SETTLE_WAIT_MS;
  for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
    try {
      const v = await attempt();
      if (v !== undefined) return v;
    } catch {
      // Postgres cannot be asked yet.
    }
    if (Date.now() >= deadline) return undefined;
    await sleep(wait);
  }
}

/** A charged call whose charge's answer was lost. */
export interface LostCall {
  requestId: string;
  accountId: string;
  amount: number;
  to: SettleTarget;
}

/**
 * Answers calls whose charge's answer was lost as the ledger says (`charged`: balance after, by
 * request id; undefined when Postgres could not be asked in time): charged, or the failure
 * (uncharged); counted in `counts` by that outcome. Unknown ones may be charged: they go to
 * `refunds`, refunded once Postgres answers if they were (refunds.ts). `chargedAt`: the time their
 * entries would carry.
 */
export function answerLost(
  calls: LostCall[],
  chargedAt: string,
  charged: Map<string, number> | undefined,
  err: unknown,
  counts: { charged: number; notCharged: number; unknown: number },
  refunds: Pick<LostCharges, 'add'>,
): void {
  for (const c of calls) {
    const balance = charged?.get(c.requestId);
    counts[charged === undefined ? 'unknown' : balance === undefined ? 'notCharged' : 'charged']++;
    if (charged === undefined) {
      refunds.add({ accountId: c.accountId, requestId: c.requestId, chargedAt });
      c.to.failed(outcomeUnknownError(err));
    } else if (balance === undefined) c.to.failed(err);
    else c.to.settled({ charged: c.amount, balance });
  }
}

/**
 * The 503 of a call whose charge may have committed (Postgres could not be asked in time): it says
 * so, rather than the usual "the call was not charged", and how to find out. The error handler logs
 * each such call's request id (details.maybeCharged).
 */
export function outcomeUnknownError(cause: unknown): AppError {
  const e = new AppError(
    'service_unavailable',
    'The gateway lost its storage while charging this call, so it may have been charged: if it was, the charge is refunded once the storage answers again, and GET /api/v1/usage then lists the charge and its refund under this request id (X-Request-Id). Retry in a few seconds.',
    { maybeCharged: true },
    { 'retry-after': '1' },
  );
  (e as { cause?: unknown }).cause = cause;
  return e;
}
