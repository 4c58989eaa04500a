// Postgres metering's charge without a lease (its lease was swept or given back meanwhile): taken
// from the account's available balance, one statement a call.
import { nowIso } from '../domain/ids.js';
import type { PendingCharge } from './lease-state.js';
import { outcomeUnknown, type LeaseStatements } from './lease-statements.js';
import { answerLost, retried } from './lost-answers.js';
import { insufficientCredits } from './meter-store.js';
import type { MeterStats } from './meter-stats.js';
import type { LostCharges } from './refunds.js';

/** Debits `c` only if the account's available balance still covers it; answers the call either way. */
export async function chargeDirect(
  statements: Pick<LeaseStatements, 'chargeFromBalance' | 'findDirectCharge'>,
  stats: Pick<MeterStats, 'lostAnswers' | 'directCharges'>,
  refunds: Pick<LostCharges, 'add'>,
  c: PendingCharge,
): Promise<void> {
  stats.directCharges++;
  const { amount } = c.hold;
  const a = c.hold.lease.accountId;
  const createdAt = nowIso();
  try {
    const row = await statements.chargeFromBalance(a, amount, c.info, createdAt);
    if (row.balance === null) c.to.failed(insufficientCredits(amount, Math.max(0, Number(row.total ?? 0)), Math.max(0, Number(row.free ?? 0))));
    else c.to.settled({ charged: amount, balance: Number(row.balance) });
  } catch (err) {
    if (!outcomeUnknown(err)) return c.to.failed(err);
    // The answer was lost (no lease is involved, so no settlement of the leases): the ledger says
    // whether it committed, asked for SETTLE_WAIT_MS.
    const charged = await retried(async () => {
      const balance = await statements.findDirectCharge(a, createdAt, c.info.requestId);
      return new Map(balance === undefined ? [] : [[c.info.requestId, balance]]);
    });
    answerLost([{ requestId: c.info.requestId, accountId: a, amount, to: c.to }], createdAt, charged, err, stats.lostAnswers, refunds);
  }
}
