// `sdg jobs list --account` reads one account's jobs of a status through an index that keeps them
// newest first, rather than every account's jobs of that status filtered (the embedded store's plan).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accountJobsQuery } from '../../src/cli/jobs-list.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestStore } from '../helpers/backends.js';

test('jobs list --account: batches and exports of one account and status are read through an index in order, with no sort', async () => {
  const ts = await createTestStore('sqlite');
  try {
    await migrateToLatest(ts.store);
    for (const kind of ['batch', 'export'] as const) {
      for (const accountId of [undefined, 'acc_1']) {
        const { sql, parameters } = accountJobsQuery(ts.store.db, kind, 'failed', { accountId, limit: 20 }).compile();
        const plan = ts.store.sqlite!.prepare(`explain query plan ${sql}`).all(...(parameters as unknown[])) as Array<{ detail: string }>;
        const details = plan.map((p) => p.detail).join(' | ');
        assert.match(details, /USING INDEX/, `${kind} ${accountId}: ${details}`);
        assert.doesNotMatch(details, /TEMP B-TREE/, `${kind} ${accountId}: ${details}`);
        if (accountId) assert.match(details, /\(account_id=\? AND status=\?\)|\(status=\? AND account_id=\?\)/, `${kind}: ${details}`);
      }
    }
  } finally {
    await ts.dispose();
  }
});
