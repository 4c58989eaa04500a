// Ids in answers say nothing about other tenants or the service's volume: ledger entries carry an
// encrypted id (pagination still walks the ledger exactly), and request ids are not a visible counter.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { grant } from '../../src/credits/credits-repo.js';
import { newRequestId } from '../../src/domain/ids.js';
import { OpaqueIds } from '../../src/domain/opaque-ids.js';
import { backends } from '../helpers/backends.js';
import { json, startHarness, type Harness } from '../helpers/harness.js';

type UsagePage = { items: Array<{ id: string; amount: number; note: string | null }>; nextCursor: string | null };

test('OpaqueIds: a keyed permutation that decodes only its own ids', () => {
  const a = new OpaqueIds(OpaqueIds.keyFrom('s'.repeat(32), 'led'), 'led');
  const b = new OpaqueIds(OpaqueIds.keyFrom('t'.repeat(32), 'led'), 'led');
  for (const n of [1, 2, 3, 1_000_000, Number.MAX_SAFE_INTEGER]) {
    const id = a.encode(n);
    assert.match(id, /^led_[A-Za-z0-9_-]{22}$/);
    assert.equal(a.decode(id), n);
    assert.equal(b.decode(id), undefined, 'another secret does not read it');
  }
  assert.notEqual(a.encode(1).slice(0, 10), a.encode(2).slice(0, 10));
  assert.equal(a.decode('led_AAAAAAAAAAAAAAAAAAAAAA'), undefined);
  assert.equal(a.decode('led_short'), undefined);
  assert.equal(a.decode('42'), undefined);
});

test('consecutive request ids do not count up', () => {
  const ids = Array.from({ length: 1_000 }, () => newRequestId());
  const tails = ids.map((id) => parseInt(id.slice(-8), 16));
  assert.equal(new Set(tails).size, tails.length);
  const rising = tails.filter((t, i) => i > 0 && t > tails[i - 1]!).length;
  assert.ok(rising > 350 && rising < 650, `about half rise, as for random ids: ${rising}`);
  const steps = new Set(tails.slice(1).map((t, i) => t - tails[i]!));
  assert.ok(steps.size > 900, 'no constant step');
});

for (const dialect of backends()) {
  describe(`ledger ids in /api/v1/usage (${dialect})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(dialect);
    });
    after(() => h.close());

    test('opaque, not the store sequence, and pages walk every entry once in order', async () => {
      const a = await h.account({ credits: 100 });
      const other = await h.account({ credits: 5 });
      for (let i = 1; i <= 6; i++) {
        await grant(h.deps.store.db, a.accountId, i, `g${i}`);
        await grant(h.deps.store.db, other.accountId, 1, 'noise');
      }
      const stored = await h.deps.store.db.selectFrom('ledger_entries').select(['id', 'note']).where('account_id', '=', a.accountId).orderBy('id', 'desc').execute();
      const got: UsagePage['items'] = [];
      let cursor: string | null = null;
      do {
        const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
        const r = await h.app.inject({ url: `/api/v1/usage?limit=2${q}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(r.statusCode, 200, r.body);
        const page = json<UsagePage>(r);
        got.push(...page.items);
        cursor = page.nextCursor;
        if (cursor) assert.ok(!/"id":\d/.test(Buffer.from(cursor.split('.')[0]!, 'base64url').toString()), 'the cursor carries no store id');
      } while (cursor);
      assert.deepEqual(
        got.map((e) => e.note),
        stored.map((s) => s.note),
      );
      const storeIds = new Set(stored.map((s) => String(s.id)));
      for (const e of got) {
        assert.match(e.id, /^led_[A-Za-z0-9_-]{22}$/);
        assert.ok(!storeIds.has(e.id));
      }
      assert.equal(new Set(got.map((e) => e.id)).size, got.length);
    });

    test('a cursor still signed but naming a foreign position is invalid_cursor', async () => {
      const a = await h.account();
      const list = `usage:${a.accountId}`;
      const forged = h.deps.cursors.encode(list, { after: 'led_AAAAAAAAAAAAAAAAAAAAAA' });
      const r = await h.app.inject({ url: `/api/v1/usage?cursor=${encodeURIComponent(forged)}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(r.statusCode, 400);
      assert.equal(json<{ error: { code: string } }>(r).error.code, 'invalid_cursor');
    });
  });
}
