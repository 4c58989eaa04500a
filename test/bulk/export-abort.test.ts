// Stopping the background roles while exports run (SIGTERM, `sdg worker` stopping) aborts them
// cleanly: no crash of the process (before the fix: an unhandled 'error' event on the aborted
// export stream), the exports are handed back and finish once a worker runs again.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startGateway, type Gateway } from '../sdk/gateway.js';

let g: Gateway;
before(async () => {
  g = await startGateway();
});
after(() => g.close());

test('stopping the worker mid-export neither crashes the process nor loses the exports', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    const a = await g.account({ credits: 100_000 });
    const ids: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const r = await fetch(`${g.url}/social/v1/bulk-export/exports/generate`, {
        method: 'POST',
        headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ startDate: `2025-06-0${i}T00:00:00Z`, endDate: `2025-06-0${i}T06:00:00Z` }),
      });
      assert.equal(r.status, 202);
      ids.push(((await r.json()) as { data: { id: string } }).data.id);
    }
    await g.stopJobs();
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(uncaught, [], 'no uncaught error while stopping');
    await g.startJobs();
    const deadline = Date.now() + 20_000;
    for (const id of ids) {
      let status = '';
      while (Date.now() < deadline) {
        const r = await fetch(`${g.url}/social/v1/bulk-export/exports/${id}`, { headers: { 'x-api-key': a.apiKey } });
        status = ((await r.json()) as { data: { status: string } }).data.status;
        if (status === 'completed' || status === 'failed') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(status, 'completed', `export ${id}`);
    }
  } finally {
    process.off('uncaughtException', onUncaught);
  }
});
