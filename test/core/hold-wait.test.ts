// A charged call refused while the balance covers it waits for this process's calls in progress to
// free their holds (hold-wait.ts), but not for what it cannot free by waiting: a balance below the
// cost, or credits only other processes hold (their leases are asked back by reserve itself).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { reserveAfterHolds } from '../../src/credits/hold-wait.js';
import type { ReserveResult, Reservation } from '../../src/credits/meter-store.js';

function fakeMeter(o: { balance: number; heldHere: number; freesAfterMs?: number }) {
  const started = Date.now();
  let reserves = 0;
  return {
    get reserves() {
      return reserves;
    },
    heldHere: () => (o.freesAfterMs !== undefined && Date.now() - started >= o.freesAfterMs ? 0 : o.heldHere),
    balance: async () => o.balance,
    reserve: async (): Promise<ReserveResult> => {
      reserves++;
      return o.freesAfterMs !== undefined && Date.now() - started >= o.freesAfterMs ? { ok: true, reservationId: {} as Reservation } : { ok: false, available: o.balance - o.heldHere };
    },
  };
}

describe('reserveAfterHolds', () => {
  it("waits for this process's holds and takes the credits once they are freed", async () => {
    const m = fakeMeter({ balance: 150, heldHere: 100, freesAfterMs: 60 });
    const r = await reserveAfterHolds(m, 'acc', 100, { available: 50 }, 2_000);
    assert.equal(r.ok, true);
    assert.ok(m.reserves >= 1);
  });

  it('gives up after maxWaitMs with the balance and what is available', async () => {
    const m = fakeMeter({ balance: 150, heldHere: 100 });
    const t0 = Date.now();
    const r = await reserveAfterHolds(m, 'acc', 100, { available: 50 }, 150);
    assert.deepEqual(r, { ok: false, available: 50, balance: 150 });
    assert.ok(Date.now() - t0 >= 140);
  });

  it('answers at once when the balance is below the cost; tries once more, without waiting, when only other processes hold credits', async () => {
    const poor = fakeMeter({ balance: 99, heldHere: 50 });
    assert.equal((await reserveAfterHolds(poor, 'acc', 100, { available: 49 }, 60_000)).ok, false);
    assert.equal(poor.reserves, 0, 'no second try: the credits are gone');
    const leasedElsewhere = fakeMeter({ balance: 150, heldHere: 0 });
    const t0 = Date.now();
    assert.deepEqual(await reserveAfterHolds(leasedElsewhere, 'acc', 100, { available: 0 }, 60_000), { ok: false, available: 150, balance: 150 });
    assert.equal(leasedElsewhere.reserves, 1, 'one more try');
    assert.ok(Date.now() - t0 < 1_000, 'no wait');
  });

  it('credits freed between the refusal and the wait (no hold of this process left) are taken', async () => {
    const m = fakeMeter({ balance: 150, heldHere: 0, freesAfterMs: 0 });
    assert.equal((await reserveAfterHolds(m, 'acc', 100, { available: 50 }, 60_000)).ok, true);
  });

  it('asks the store again only when one of its holds ended, not at every poll', async () => {
    const m = fakeMeter({ balance: 150, heldHere: 100 });
    await reserveAfterHolds(m, 'acc', 100, { available: 50 }, 300);
    assert.equal(m.reserves, 1, 'the last try only');
  });
});
