// A failed export attempt is retried after a wait, not at once: what fails an export is mostly
// brief (the object store's network, a disk being cleared), and three attempts in a row within a
// millisecond failed the export for good. The wait is a lease's time (JOBS_LEASE_SECONDS), then
// twice that; the third failure fails the export.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportJobKind, runExportNow } from '../../src/exports/export-job.js';
import { JobRunner } from '../../src/jobs/runner.js';
import type { ObjectBody, ObjectStore } from '../../src/objects/object-store.js';
import { backends } from '../helpers/backends.js';
import { until } from '../helpers/processes.js';
import { errorOf, json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, type BulkHarness } from './helpers.js';

const LEASE_MS = 500;

/** The store's puts fail while `failures` is above zero (each failing one counts down). */
function flaky(real: ObjectStore): ObjectStore & { failures: number } {
  const store = {
    failures: 0,
    put: async (key: string, body: ObjectBody) => {
      if (store.failures > 0) {
        store.failures--;
        if ('destroy' in body) body.destroy();
        throw new Error('the object store cannot be reached');
      }
      return real.put(key, body);
    },
    stat: (key: string) => real.stat(key),
    createReadStream: (key: string) => real.createReadStream(key),
    delete: (key: string) => real.delete(key),
    ...(real.cleanupPartial ? { cleanupPartial: (key: string) => real.cleanupPartial!(key) } : {}),
  };
  return store;
}

for (const backend of backends()) {
  describe(`export retries (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    let objects: ReturnType<typeof flaky>;
    before(async () => {
      b = await bulkHarness(backend, { JOBS_LEASE_SECONDS: String(LEASE_MS / 1000) });
      a = await b.h.account();
      objects = flaky(b.h.deps.bulk.objects);
      b.h.deps.bulk.objects = objects;
    });
    after(() => b.h.close());

    async function requestExport(hour: number): Promise<string> {
      const r = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: `2025-06-01T0${hour}:00:00Z`, endDate: `2025-06-01T0${hour + 1}:00:00Z` });
      assert.equal(r.statusCode, 202, r.body);
      return json<{ data: { id: string } }>(r).data.id;
    }

    /** One try at running the export now: done, failed, or not claimable yet. */
    async function attempt(id: string): Promise<'done' | 'failed' | 'waiting'> {
      try {
        return (await runExportNow(b.h.deps, id, `w${Math.random()}`)) ? 'done' : 'waiting';
      } catch {
        return 'failed';
      }
    }

    async function record(id: string) {
      return json<{ data: { status: string; error: string | null } }>(await call(b.h, a, 'GET', `${BASE}/exports/${id}`)).data;
    }

    /** Tries until the export is claimable again; returns what that attempt did and when it started. */
    async function nextAttempt(id: string): Promise<{ outcome: 'done' | 'failed'; at: number }> {
      for (;;) {
        const at = Date.now();
        const outcome = await attempt(id);
        if (outcome !== 'waiting') return { outcome, at };
        await new Promise((r) => setTimeout(r, 20));
      }
    }

    test('two brief failures: each next attempt waits (one lease, then two), and the third completes the export', async () => {
      const id = await requestExport(1);
      objects.failures = 2;
      const t0 = Date.now();
      assert.equal(await attempt(id), 'failed');
      assert.equal(await attempt(id), 'waiting', 'not claimable right after failing');
      assert.equal((await record(id)).status, 'running', 'still in progress for its owner');
      const second = await nextAttempt(id);
      assert.equal(second.outcome, 'failed');
      assert.ok(second.at - t0 >= LEASE_MS, `second attempt ${second.at - t0} ms after the first`);
      assert.equal(await attempt(id), 'waiting');
      const third = await nextAttempt(id);
      assert.equal(third.outcome, 'done');
      assert.ok(third.at - second.at >= 2 * LEASE_MS, `third attempt ${third.at - second.at} ms after the second`);
      assert.deepEqual(await record(id), { ...(await record(id)), status: 'completed', error: null });
      const link = await call(b.h, a, 'GET', `${BASE}/exports/${id}/download`);
      assert.equal(link.statusCode, 200, link.body);
    });

    test("the worker's log says which failures will be retried and which was the last", async () => {
      const id = await requestExport(5);
      objects.failures = 3;
      const lines: Array<{ level: string; msg: string; attempts?: number; err?: unknown }> = [];
      const capture = (level: string) => (o: object, msg: string) => void lines.push({ level, msg, ...o });
      const runner = new JobRunner([exportJobKind(b.h.deps)], [], { pollMs: 20, owner: 'w', log: { info: capture('info'), warn: capture('warn'), error: capture('error') } });
      runner.start();
      try {
        await until('the export fails', 10_000, async () => (await record(id)).status === 'failed');
        await until('its last line', 2_000, () => lines.some((l) => /for good/.test(l.msg)));
      } finally {
        await runner.stop();
      }
      const failures = lines.filter((l) => l.level === 'error').map((l) => l.msg);
      assert.deepEqual(failures, ['export failed; it will be retried', 'export failed; it will be retried', 'export failed for good after 3 attempts']);
      const last = lines.find((l) => /for good/.test(l.msg))!;
      assert.equal(last.attempts, 3);
      assert.match(String((last.err as Error).message), /cannot be reached/, 'the failure itself, not the wrapper');
    });

    test('three failures fail the export, saying to request it again', async () => {
      const id = await requestExport(3);
      objects.failures = 3;
      assert.equal(await attempt(id), 'failed');
      assert.equal((await nextAttempt(id)).outcome, 'failed');
      assert.equal((await nextAttempt(id)).outcome, 'failed');
      const r = await record(id);
      assert.equal(r.status, 'failed');
      assert.match(r.error ?? '', /request it again/);
      // Its download says it failed for good (not "a link is available once it completes").
      const dl = await call(b.h, a, 'GET', `${BASE}/exports/${id}/download`);
      assert.equal(dl.statusCode, 409);
      assert.deepEqual(errorOf(dl).details, { status: 'failed' });
      assert.match(errorOf(dl).message, /^Export \d+ failed and will not complete: .*request it again/);
      assert.equal(await attempt(id), 'waiting', 'a failed export is never claimed again');
      assert.equal(objects.failures, 0);
    });
  });
}
