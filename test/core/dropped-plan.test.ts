// An account whose plan the deployment's plans no longer have (a PLANS_FILE that dropped it) is held
// to the default plan's limits, every one of them: before, its rate limit fell to 600 a minute and
// its key limit to 20 whatever the default plan said, while its watchlist followed the default plan.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defaultPlans } from '../../src/config/plans.js';
import { planWatchlistLimit } from '../../src/jobs/job-deps.js';
import { backends } from '../helpers/backends.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';

// The default plan's limits differ from every fallback the code could take instead.
const house = { ...defaultPlans[0]!, id: 'house', name: 'House', rateLimitPerMinute: 900, keyLimit: 3, watchlistLimit: 7 };

for (const backend of backends()) {
  describe(`an account on a plan the deployment dropped (${backend})`, () => {
    let h: Harness;
    const plansFile = join(mkdtempSync(join(tmpdir(), 'sdg-plans-')), 'plans.json');
    before(async () => {
      writeFileSync(plansFile, JSON.stringify([...defaultPlans, house]));
      h = await startHarness(backend, { PLANS_FILE: plansFile, DEFAULT_PLAN: 'house' });
    });
    after(async () => {
      await h.close();
      rmSync(dirname(plansFile), { recursive: true, force: true });
    });

    test("gets the default plan's rate limit, key limit and watchlist limit", async () => {
      const a = await h.account({ planId: 'pro' });
      // Set before the key's first use: the key's record (with its plan) is then read once.
      await h.deps.store.db.updateTable('accounts').set({ plan_id: 'gone', rate_limit_per_minute: null }).where('id', '=', a.accountId).execute();
      const headers = { 'x-api-key': a.apiKey };
      const res = await h.app.inject({ method: 'GET', url: '/api/v1/credits/balance', headers });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-limit'], '900');
      assert.equal(await planWatchlistLimit(h.deps, a.accountId), 7);
      // The harness made the first key: two more fit, the fourth is refused.
      for (let i = 0; i < 2; i++) assert.equal((await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} })).statusCode, 201);
      const over = await h.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers, payload: {} });
      assert.equal(over.statusCode, 409, over.body);
      assert.deepEqual(errorOf(over).details, { limit: 3, active: 3 });
    });
  });
}
