// `sdg crawl start` and `sdg plans`, spawned against a store as an operator runs them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { defaultPlans } from '../../src/config/plans.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { runSdg } from '../helpers/processes.js';

for (const backend of backends()) {
  describe(`sdg crawl start and sdg plans (${backend})`, () => {
    let ts: TestStore;
    before(async () => {
      ts = await createTestStore(backend);
      await migrateToLatest(ts.store);
    });
    after(() => ts.dispose());

    test('crawl start: refused with nothing watched; starts a cycle over every watched account; refused while it runs', async () => {
      const none = await runSdg(['crawl', 'start', '--json'], ts.env);
      assert.equal(none.code, 3, none.stderr);
      assert.equal((JSON.parse(none.stderr) as { error: { code: string } }).error.code, 'nothing_to_crawl');
      const made = await runSdg(['accounts', 'create', '--name', 'Watcher', '--json'], ts.env);
      const { accountId } = JSON.parse(made.stdout) as { accountId: string };
      const at = new Date().toISOString();
      await ts.store.db.insertInto('watchlist_entries').values([
        { account_id: accountId, social_user_id: '11', username: 'eleven', added_at: at },
        { account_id: accountId, social_user_id: '12', username: 'twelve', added_at: at },
      ]).execute();

      const started = await runSdg(['crawl', 'start', '--json'], ts.env);
      assert.equal(started.code, 0, started.stderr);
      const c = JSON.parse(started.stdout) as { cycleId: string; accountsTargeted: number; startedAt: string };
      assert.match(c.cycleId, /^cyc_/);
      assert.equal(c.accountsTargeted, 2);
      const row = await ts.store.db.selectFrom('crawl_cycles').selectAll().where('id', '=', c.cycleId).executeTakeFirstOrThrow();
      assert.deepEqual([row.trigger, row.status, row.slot], ['operator', 'running', null]);
      const targets = await ts.store.db.selectFrom('crawl_targets').select('social_user_id').where('cycle_id', '=', c.cycleId).orderBy('social_user_id').execute();
      assert.deepEqual(targets.map((t) => t.social_user_id), ['11', '12']);

      const again = await runSdg(['crawl', 'start', '--json'], ts.env);
      assert.equal(again.code, 3);
      const refused = JSON.parse(again.stderr) as { error: { code: string; message: string; details: { cycleId: string } } };
      assert.equal(refused.error.code, 'cycle_running');
      assert.equal(refused.error.details.cycleId, c.cycleId);
      assert.match(refused.error.message, /0 of 2 accounts done/);
      const human = await runSdg(['crawl', 'start'], ts.env);
      assert.match(human.stderr, /^sdg: Crawl cycle cyc_\S+ is running/m);
      const cycles = await ts.store.db.selectFrom('crawl_cycles').select('id').execute();
      assert.equal(cycles.length, 1);
    });

    test("plans: each plan with its accounts and the default; accounts on a plan the deployment dropped are named", async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sdg-plans-'));
      try {
        await runSdg(['accounts', 'create', '--name', 'P1', '--plan', 'pro'], ts.env);
        await runSdg(['accounts', 'create', '--name', 'P2', '--plan', 'pro'], ts.env);
        const r = await runSdg(['plans', '--json'], ts.env);
        assert.equal(r.code, 0, r.stderr);
        type Out = { plans: Array<{ id: string; accounts: number; default: boolean; keyLimit: number }>; unknownPlans: Array<{ id: string; accounts: number }> };
        const out = JSON.parse(r.stdout) as Out;
        assert.deepEqual(out.plans.map((p) => p.id), defaultPlans.map((p) => p.id));
        assert.equal(out.plans.find((p) => p.id === 'pro')!.accounts, 2);
        assert.deepEqual(out.plans.filter((p) => p.default).map((p) => p.id), ['free']);
        assert.deepEqual(out.unknownPlans, []);
        // A PLANS_FILE without `pro`: its two accounts are named, on the default plan's limits.
        const file = join(dir, 'plans.json');
        writeFileSync(file, JSON.stringify(defaultPlans.filter((p) => p.id !== 'pro')));
        const dropped = await runSdg(['plans'], { ...ts.env, PLANS_FILE: file });
        assert.equal(dropped.code, 0, dropped.stderr);
        assert.match(dropped.stdout, /^ID\s+NAME\s+PRICE\s+CREDITS\s+WATCHLIST\s+RATE\/MIN\s+KEYS\s+ACCOUNTS\s+DEFAULT\nfree\s+Free\s+0\.00 USD\s+10000\s+25\s+600\s+5\s+\d+\s+yes\n/);
        assert.match(dropped.stdout, /^2 account\(s\) on plan pro, which this deployment's plans do not have: the default plan \(free\) applies to them\.$/m);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
