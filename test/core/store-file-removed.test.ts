// The embedded store's file removed (rm -rf DATA_DIR) or replaced under a running server. Before,
// SQLite went on writing to the open, nameless file: calls were served and charged, and all of it
// was gone at the next start. Now keyed calls answer 503 uncharged, /readyz says why, and the
// outage is logged, within the watch's 2 s.
import assert from 'node:assert/strict';
import { copyFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { SQLITE_FILE } from '../../src/db/connect.js';
import { errorOf, startHarness, type Harness } from '../helpers/harness.js';
import { demoNoon } from '../helpers/social.js';
import { notReadyState } from '../helpers/not-ready.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function refusedOnceGone(harness: Harness, tweetId: string, remove: (dataDir: string) => void): Promise<void> {
  const a = await harness.account({ credits: 1_000 });
  const headers = { 'x-api-key': a.apiKey };
  const tweet = `/social/v1/tweets/${tweetId}`;
  assert.equal((await harness.app.inject({ url: tweet, headers })).statusCode, 200);
  assert.equal((await harness.app.inject({ url: '/readyz' })).statusCode, 200);

  remove(harness.testStore.dataDir);
  await sleep(2_500);

  for (const url of [tweet, '/echo/v1/hello', '/api/v1/credits/balance']) {
    const res = await harness.app.inject({ url, headers });
    assert.equal(res.statusCode, 503, `${url}: ${res.body}`);
    assert.equal(errorOf(res).code, 'service_unavailable');
    assert.equal(res.headers['x-credits-charged'] ?? '0', '0');
  }
  const ready = await harness.app.inject({ url: '/readyz' });
  assert.equal(ready.statusCode, 503);
  assert.deepEqual(notReadyState(ready), { status: 'store unavailable', reason: 'STORE_FILE_REMOVED' });
  // Nothing was charged after the file went (read from the connection, which still holds it).
  assert.equal((await getBalance(harness.deps.store.db, a.accountId))!.balance, 900);
  assert.equal(await ledgerSum(harness.deps.store.db, a.accountId), 900);
}

test('the store directory removed: keyed calls 503 uncharged, /readyz 503 naming it', async () => {
  const { tweak, sample } = demoNoon();
  h = await startHarness('sqlite', {}, tweak);
  await refusedOnceGone(h, sample.tweetIds[0]!, (dir) => rmSync(dir, { recursive: true, force: true }));
});

test('the store file replaced by another (a restore under a running server): the same', async () => {
  const { tweak, sample } = demoNoon();
  h = await startHarness('sqlite', {}, tweak);
  await refusedOnceGone(h, sample.tweetIds[0]!, (dir) => {
    copyFileSync(join(dir, SQLITE_FILE), join(dir, 'copy.sqlite'));
    renameSync(join(dir, 'copy.sqlite'), join(dir, SQLITE_FILE));
  });
});
