// A Postgres charge group's parameters (lease-statements.ts, CHARGE_GROUP), from its pending charges.
import type { GroupEntries } from './lease-statements.js';
import type { PendingCharge } from './lease-state.js';

export interface GroupColumns {
  /** The ledger entries' columns, in the group's order; `later`: the credits charged after each in the group for its account. */
  entries: GroupEntries;
  /** The accounts charged, in id order (every statement locks accounts in one order). */
  ids: string[];
  /** Each account's total, in the order of `ids`. */
  totals: number[];
}

/**
 * One pass, from the last charge back. An entry's balance after is its account's balance after the
 * group plus `later`; what is left in `after` per account is then its total. A group is mostly runs
 * of one account's charges, kept in locals rather than looked up in the Map.
 */
export function groupColumns(batch: readonly PendingCharge[]): GroupColumns {
  const n = batch.length;
  const entries: GroupEntries = {
    accountIds: new Array<string>(n),
    amounts: new Array<number>(n),
    later: new Array<number>(n),
    requestIds: new Array<string>(n),
    keyIds: new Array<string | null>(n),
    endpoints: new Array<string>(n),
  };
  const after = new Map<string, number>();
  let run: string | undefined;
  let runAfter = 0;
  for (let i = n - 1; i >= 0; i--) {
    const c = batch[i]!;
    const a = c.hold.lease.accountId;
    if (a !== run) {
      if (run !== undefined) after.set(run, runAfter);
      run = a;
      runAfter = after.get(a) ?? 0;
    }
    entries.later[i] = runAfter;
    runAfter += c.hold.amount;
    entries.accountIds[i] = a;
    entries.amounts[i] = c.hold.amount;
    entries.requestIds[i] = c.info.requestId;
    entries.keyIds[i] = c.info.keyId;
    entries.endpoints[i] = c.info.endpoint;
  }
  if (run !== undefined) after.set(run, runAfter);
  const ids = after.size === 1 ? [run!] : [...after.keys()].sort();
  return { entries, ids, totals: ids.map((id) => after.get(id)!) };
}
