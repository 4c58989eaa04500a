// A call refused while the balance covers its cost was refused for credits other calls of the
// account hold while they run (an upstream fetch, a turn's charges not yet committed). Those calls
// may yet fail and free them: this waits for this process's own (a bounded time) rather than answer
// 402 to a call the account can pay. Other processes' leases are not waited for: reserve() asks them
// back itself, and a killed process's lease is freed only by its expiry. The store is asked again
// only when one of this process's holds has ended (on Postgres each refused reserve() asks the
// account's other lease holders to give back), and once at the end, so that credits freed just
// before are not missed.
import { setTimeout as sleep } from 'node:timers/promises';
import type { MeterStore, ReserveResult } from './meter-store.js';

export type HoldWaitOutcome = { ok: true; reservationId: Extract<ReserveResult, { ok: true }>['reservationId'] } | { ok: false; available: number; balance: number };

type Meter = Pick<MeterStore, 'reserve' | 'balance' | 'heldHere'>;

export async function reserveAfterHolds(meter: Meter, accountId: string, cost: number, first: { available: number }, maxWaitMs: number): Promise<HoldWaitOutcome> {
  const deadline = Date.now() + maxWaitMs;
  let available = first.available;
  // The balance itself (never below what was available): below the cost, the credits are gone.
  let balance = Math.max(available, (await meter.balance(accountId)) ?? 0);
  if (balance < cost) return { ok: false, available, balance };
  let held = meter.heldHere(accountId);
  let delay = 5;
  while (held > 0 && Date.now() < deadline) {
    await sleep(Math.min(delay, Math.max(0, deadline - Date.now())));
    delay = Math.min(delay * 2, 250);
    const now = meter.heldHere(accountId);
    if (now >= held) continue; // none of this process's holds ended yet
    const r = await meter.reserve(accountId, cost);
    if (r.ok) return r;
    available = r.available;
    balance = Math.max(available, (await meter.balance(accountId)) ?? 0);
    if (balance < cost) return { ok: false, available, balance };
    held = meter.heldHere(accountId);
  }
  // Nothing (more) of this process's to wait for, or the time is up: one more try.
  const last = await meter.reserve(accountId, cost);
  if (last.ok) return last;
  return { ok: false, available: last.available, balance: Math.max(last.available, balance) };
}
