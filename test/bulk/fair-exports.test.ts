// Exports are claimed in turns across accounts: one account's many queued exports do not delay
// another's. Before, the claim took the oldest queued export, so B waited behind all of A's.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { newExportId } from '../../src/domain/record-ids.js';
import { claimNextExport } from '../../src/exports/export-claim.js';
import { completeExport, createExport, findExport } from '../../src/exports/export-repo.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { migrateToLatest } from '../../src/db/migrate.js';

const RANGE = { start: '2025-06-01T00:00:00.000Z', end: '2025-06-02T00:00:00.000Z' };

for (const backend of backends()) {
  describe(`fair export claims (${backend})`, () => {
    let t: TestStore;
    let ms = Date.parse('2025-06-02T12:00:00Z');
    const queue = async (accountId: string, n: number): Promise<string[]> => {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        ms += 1;
        const id = newExportId(ms);
        await createExport(t.store.db, { id, accountId, ...RANGE, now: new Date(ms).toISOString() });
        ids.push(id);
      }
      return ids;
    };
    const account = async (name: string) => (await createAccount(t.store.db, { name, planId: 'free' })).accountId;
    /** Claims and completes exports one at a time (one worker), answering whose each was. */
    const serve = async (n: number, names: Map<string, string>): Promise<string[]> => {
      const order: string[] = [];
      for (let i = 0; i < n; i++) {
        const c = await claimNextExport(t.store.db, 'w1', 30_000);
        if (!c) break;
        const row = (await findExport(t.store.db, c.id))!;
        order.push(names.get(row.account_id)!);
        assert.ok(await completeExport(t.store.db, c, { tweetCount: 0, sizeBytes: 0, sha256: '', now: new Date().toISOString() }));
      }
      return order;
    };

    before(async () => {
      t = await createTestStore(backend);
      await migrateToLatest(t.store);
    });
    after(() => t.dispose());

    test("one account's 60 queued exports: another account's export is served second, not 61st", async () => {
      const a = await account('a');
      const b = await account('b');
      await queue(a, 60);
      const [bId] = await queue(b, 1);
      const names = new Map([
        [a, 'A'],
        [b, 'B'],
      ]);
      const order = await serve(3, names);
      assert.deepEqual(order, ['A', 'B', 'A']);
      assert.equal((await findExport(t.store.db, bId!))!.status, 'completed');
      assert.equal((await serve(100, names)).length, 58, 'the rest of A is still served');
    });

    test('three accounts take turns; an account that arrives later is served at its next turn; each in its own order', async () => {
      const a = await account('a');
      const b = await account('b');
      const c = await account('c');
      const names = new Map([
        [a, 'A'],
        [b, 'B'],
        [c, 'C'],
      ]);
      const aIds = await queue(a, 4);
      await queue(b, 2);
      const first = await serve(2, names);
      await queue(c, 1);
      const rest = await serve(10, names);
      // A (oldest) and B were never served: A first, then B; C arrives and has had no turn: next.
      assert.deepEqual([...first, ...rest], ['A', 'B', 'C', 'A', 'B', 'A', 'A']);
      const done = await t.store.db.selectFrom('exports').select(['id', 'completed_at']).where('account_id', '=', a).execute();
      assert.equal(done.length, aIds.length);
    });

    test('an export whose worker died is resumed before new ones', async () => {
      const a = await account('a');
      const [x] = await queue(a, 1);
      const now = Date.now();
      const c1 = await claimNextExport(t.store.db, 'dead', 1_000, now);
      assert.equal(c1?.id, x);
      const b = await account('b');
      await queue(b, 1);
      const c2 = await claimNextExport(t.store.db, 'w2', 30_000, now + 5_000);
      assert.equal(c2?.id, x);
      assert.equal(c2?.attempts, 2);
    });
  });
}
