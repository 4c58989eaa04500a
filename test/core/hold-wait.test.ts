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

  it('answers at once when the balance is below the cost, or only other processes hold credits', async () => {
    for (const m of [fakeMeter({ balance: 99, heldHere: 50 }), fakeMeter({ balance: 150, heldHere: 0 })]) {
      const r = await reserveAfterHolds(m, 'acc', 100, { available: 0 }, 60_000);
      assert.equal(r.ok, false);
      assert.equal(m.reserves, 0, 'no second try');
    }
  });
});
