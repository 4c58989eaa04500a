// Refunds of charges whose call was answered with a failure. On Postgres a group charge's answer can
// be lost with Postgres then out of reach for longer than a call waits (lost-answers.ts): the call
// is answered 503 with details.maybeCharged, and its charge may have committed. No charge for
// failures: the process keeps such calls (LostCharges) and, once Postgres answers, refunds each one
// whose charge is in the ledger. `sdg credits refund` does the same by request id, for a process
// that stopped first (its warn log names the calls).
import { sql, type Kysely } from 'kysely';
import { nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import { creditBalance, MAX_BALANCE } from './balance-credit.js';

/** A call answered with a failure whose charge may have committed. */
export interface LostCharge {
  accountId: string;
  requestId: string;
  /** The time the charge's ledger entry would carry (the group's), to find it by the ledger's index. */
  chargedAt?: string;
}

export type RefundOutcome =
  | { outcome: 'refunded'; amount: number; balance: number }
  | { outcome: 'already_refunded' }
  | { outcome: 'not_charged' };

/**
 * Refunds the charge of `c.requestId` to its account, if the ledger holds one and no refund of it:
 * the balance goes back up by the charge, with a ledger entry of kind `refund` naming the request,
 * in one transaction that first locks the account's row (so two refunds of one call cannot both
 * pass the check).
 */
export async function refundCharge(db: Kysely<Database>, c: LostCharge, note: string): Promise<RefundOutcome> {
  return db.transaction().execute(async (trx) => {
    // The lock (a no-op update on SQLite, whose transactions are serialized anyway).
    const locked = await trx.updateTable('accounts').set({ balance: sql<number>`balance` }).where('id', '=', c.accountId).returning('id').executeTakeFirst();
    if (!locked) return { outcome: 'not_charged' } as const;
    let q = trx.selectFrom('ledger_entries').select(['amount', 'key_id', 'endpoint', 'created_at']).where('account_id', '=', c.accountId).where('kind', '=', 'charge').where('request_id', '=', c.requestId);
    if (c.chargedAt !== undefined) q = q.where('created_at', '=', c.chargedAt);
    const charge = await q.executeTakeFirst();
    if (!charge) return { outcome: 'not_charged' } as const;
    // A refund comes after its charge: the ledger's (account_id, created_at) index finds it.
    const prior = await trx
      .selectFrom('ledger_entries')
      .select('id')
      .where('account_id', '=', c.accountId)
      .where('created_at', '>=', charge.created_at)
      .where('kind', '=', 'refund')
      .where('request_id', '=', c.requestId)
      .executeTakeFirst();
    if (prior) return { outcome: 'already_refunded' } as const;
    const amount = -Number(charge.amount);
    const balance = await creditBalance(trx, c.accountId, amount);
    if (balance === undefined) throw new Error(`A refund of ${amount} would take the balance of ${c.accountId} past ${MAX_BALANCE}.`);
    // Never before the charge, even if this host's clock is behind the one that wrote it.
    const at = nowIso();
    await trx
      .insertInto('ledger_entries')
      .values({ account_id: c.accountId, kind: 'refund', amount, balance_after: balance, request_id: c.requestId, key_id: charge.key_id, endpoint: charge.endpoint, note, created_at: at > charge.created_at ? at : charge.created_at })
      .execute();
    return { outcome: 'refunded', amount, balance } as const;
  });
}

/** What one pass over the lost charges did: each call's outcome, or the error that left it for later. */
export type RefundPass = Array<{ charge: LostCharge } & (RefundOutcome | { outcome: 'failed'; error: unknown })>;

export const LOST_CHARGE_NOTE = 'refund: the call was answered 503 (maybeCharged) after the gateway lost the answer of its charge';

/**
 * The calls of this process answered with details.maybeCharged, until each is refunded or found
 * uncharged. Kept in memory: a process stopped before Postgres answered again logs the ones left
 * (serve.ts), for `sdg credits refund`.
 */
export class LostCharges {
  private readonly pending = new Map<string, LostCharge>();

  constructor(
    private readonly db: Kysely<Database>,
    /** Counted for /metrics (MeterStats.lostCharges). */
    private readonly counts: { refunded: number; notCharged: number; pending: number } = { refunded: 0, notCharged: 0, pending: 0 },
    /**
     * Settles what this process's statements with lost answers did, true once nothing is left to
     * settle (LostAnswers.settle): until then a group charge of this process could still be running
     * in Postgres, and a call found uncharged might be charged a moment later.
     */
    private readonly settled: () => Promise<boolean> = async () => true,
  ) {}

  add(c: LostCharge): void {
    this.pending.set(c.requestId, c);
    this.counts.pending = this.pending.size;
  }

  get size(): number {
    return this.pending.size;
  }

  list(): LostCharge[] {
    return [...this.pending.values()];
  }

  /**
   * One attempt for each call kept, once this process's lost statements are settled. Stops at the
   * first failure (Postgres is still out of reach, most likely), which goes to the back of the queue:
   * a call that fails for a reason of its own does not hold up the others.
   */
  async pass(): Promise<RefundPass> {
    const done: RefundPass = [];
    if (this.pending.size === 0 || !(await this.settled())) return done;
    for (const c of [...this.pending.values()]) {
      try {
        const r = await refundCharge(this.db, c, LOST_CHARGE_NOTE);
        this.pending.delete(c.requestId);
        this.counts.pending = this.pending.size;
        if (r.outcome === 'refunded') this.counts.refunded++;
        else if (r.outcome === 'not_charged') this.counts.notCharged++;
        done.push({ charge: c, ...r });
      } catch (error) {
        this.pending.delete(c.requestId);
        this.pending.set(c.requestId, c);
        done.push({ charge: c, outcome: 'failed', error });
        break;
      }
    }
    return done;
  }
}
