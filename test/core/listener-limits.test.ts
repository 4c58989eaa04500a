// Signals shared by many calls under way (a job's, which a crawl's CRAWL_CONCURRENCY source calls
// all listen to) carry no listener limit: past 10 Node printed "MaxListenersExceededWarning ...
// possible memory leak" on stderr, for listeners that are removed as each call ends.
// (The API's calls without a signal: test/sources/resilience.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withHeartbeat } from '../../src/jobs/lease.js';

test("a job's signal takes 30 listeners at once without a warning", async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    // The lease is renewed every leaseMs / 3: a minute, so the store is never asked here.
    await withHeartbeat(undefined as never, { table: 'x' } as never, { id: 'j', lease: 'l' } as never, 60_000, new AbortController().signal, async (signal) => {
      const listeners = Array.from({ length: 30 }, () => () => undefined);
      for (const l of listeners) signal.addEventListener('abort', l);
      await new Promise((r) => setImmediate(r));
      for (const l of listeners) signal.removeEventListener('abort', l);
    });
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  assert.deepEqual(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message), []);
});
