// A call refused while the balance covers its cost was refused for credits other calls of the
// account hold while they run (an upstream fetch, a turn's charges not yet committed). Those calls
// may yet fail and free them: wait for them, a bounded time, rather than answer 402 to a call the
// account can pay. Polled, as on Postgres the holds may be another process's.
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeterStore, ReserveResult } from './meter-store.js';

export type HoldWaitOutcome = { ok: true; reservationId: Extract<ReserveResult, { ok: true }>['reservationId'] } | { ok: false; available: number; balance: number };

export async function reserveAfterHolds(meter: Pick<MeterStore, 'reserve' | 'balance' | 'heldHere'>, accountId: string, cost: number, first: { available: number }, maxWaitMs: number): Promise<HoldWaitOutcome> {
  const deadline = Date.now() + maxWaitMs;
  let available = first.available;
  let delay = 5;
  for (;;) {
    // The balance itself (never below what was available): below the cost, the credits are gone.
    const balance = Math.max(available, (await meter.balance(accountId)) ?? 0);
    const left = deadline - Date.now();
    // Nothing of this process's to wait for (the rest is other processes' leases: reserve() asked for them).
    if (balance < cost || left <= 0 || meter.heldHere(accountId) === 0) return { ok: false, available, balance };
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, 250);
    const r = await meter.reserve(accountId, cost);
    if (r.ok) return r;
    available = r.available;
  }
}
