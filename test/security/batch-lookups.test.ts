// A watchlist batch looks items up at the data source only while the watchlist has room: once it is
// full the remaining items are limit_exceeded without a lookup, but for those naming an account the
// list holds (already_present; by username after a lookup).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defaultPlans } from '../../src/config/plans.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { backends } from '../helpers/backends.js';
import { BASE, bulkHarness, call, type BulkHarness } from '../bulk/helpers.js';

const plansFile = join(mkdtempSync(join(tmpdir(), 'sdg-plans-')), 'plans.json');
writeFileSync(plansFile, JSON.stringify([...defaultPlans, { ...defaultPlans[0]!, id: 'tiny', name: 'Tiny', watchlistLimit: 3 }]));

for (const backend of backends()) {
  describe(`batch lookups stop at a full watchlist (${backend})`, () => {
    let b: BulkHarness;
    let lookups = 0;
    before(async () => {
      b = await bulkHarness(backend, { PLANS_FILE: plansFile });
      const byId = b.source.getUserById.bind(b.source);
      const byName = b.source.getUserByUsername.bind(b.source);
      b.source.getUserById = (...args: Parameters<typeof byId>) => {
        lookups += 1;
        return byId(...args);
      };
      b.source.getUserByUsername = (...args: Parameters<typeof byName>) => {
        lookups += 1;
        return byName(...args);
      };
    });
    after(() => b.h.close());

    test('many items on a watchlist of 3: 3 lookups, the rest limit_exceeded; a second batch makes none', async () => {
      const a = await b.h.account({ planId: 'tiny' });
      const items: ({ socialUserId: string } | { username: string })[] = b.sample.userIds.slice(0, 50).map((socialUserId) => ({ socialUserId }));
      items.push(...b.sample.usernames.slice(0, 50).map((username) => ({ username })));
      assert.ok(items.length >= 10, `${items.length} items`);
      const res = await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items });
      assert.equal(res.statusCode, 202, res.body);
      await drainBulkWork(b.h.deps, { crawl: false });
      const listed = await b.h.deps.store.db.selectFrom('watchlist_entries').select(['social_user_id', 'username']).where('account_id', '=', a.accountId).execute();
      assert.equal(listed.length, 3);
      // Items naming an account the full list holds answer already_present: by username, after a
      // lookup (the name may have passed to another account); by id, without one.
      const names = new Set(listed.map((e) => e.username.toLowerCase()));
      const ids = new Set(listed.map((e) => e.social_user_id));
      const byName = items.filter((i) => 'username' in i && names.has(i.username.toLowerCase())).length;
      const byId = items.slice(3).filter((i) => 'socialUserId' in i && ids.has(i.socialUserId)).length;
      assert.equal(lookups, 3 + byName);
      const rows = await b.h.deps.store.db.selectFrom('watchlist_batch_items').select('status').execute();
      assert.equal(rows.filter((r) => r.status === 'added').length, 3);
      assert.equal(rows.filter((r) => r.status === 'already_present').length, byName + byId);
      assert.equal(rows.filter((r) => r.status === 'limit_exceeded').length, items.length - 3 - byName - byId);

      const before = lookups;
      const second = b.sample.userIds.slice(-5);
      const again = await call(b.h, a, 'POST', `${BASE}/watchlist/batch`, { items: second.map((socialUserId) => ({ socialUserId })) });
      assert.equal(again.statusCode, 202, again.body);
      await drainBulkWork(b.h.deps, { crawl: false });
      assert.equal(lookups, before, 'no lookup for a full watchlist, given ids');
      const all = await b.h.deps.store.db.selectFrom('watchlist_batch_items').select('status').execute();
      const held = second.filter((id) => ids.has(id)).length;
      assert.equal(all.filter((r) => r.status === 'limit_exceeded').length, items.length - 3 - byName - byId + 5 - held);
    });
  });
}
