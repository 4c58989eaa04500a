// The jobs on /metrics: the store's backlog (from any process) and what this process's runners did
// with each job, against a real export job on each store, and the runner's other outcomes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { exportJobKind } from '../../src/exports/export-job.js';
import { JobGaveUpError, JobRunner, type JobKind, type Log } from '../../src/jobs/runner.js';
import { LeaseLostError } from '../../src/jobs/lease.js';
import { exportLease } from '../../src/exports/export-repo.js';
import { BACKLOG_READ_MS, createMetrics, watchBacklog } from '../../src/http/metrics.js';
import type { ObjectStore } from '../../src/objects/object-store.js';
import { backends } from '../helpers/backends.js';
import { until } from '../helpers/processes.js';
import { json, type TestAccount } from '../helpers/harness.js';
import { BASE, bulkHarness, call, type BulkHarness } from './helpers.js';

const quiet: Log = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The value of one series line of a /metrics text (undefined when the line is not there). */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

for (const backend of backends()) {
  describe(`jobs on /metrics (${backend})`, () => {
    let b: BulkHarness;
    let a: TestAccount;
    /** Puts of the object named after this export id fail. */
    let failing = '';
    before(async () => {
      b = await bulkHarness(backend, { JOBS_LEASE_SECONDS: '0.5' });
      a = await b.h.account();
      const real = b.h.deps.bulk.objects;
      const objects: ObjectStore = Object.assign(Object.create(real) as ObjectStore, {
        put: async (key: string, body: Parameters<ObjectStore['put']>[1]) => {
          if (failing && key.includes(failing)) {
            if ('destroy' in body) body.destroy();
            throw new Error('the object store cannot be reached');
          }
          return real.put(key, body);
        },
      });
      b.h.deps.bulk.objects = objects;
    });
    after(() => b.h.close());

    const scrape = async () => {
      const r = await b.h.app.inject({ url: '/metrics' });
      assert.equal(r.statusCode, 200);
      return r.body;
    };
    const requestExport = async (hour: number) => {
      const r = await call(b.h, a, 'POST', `${BASE}/exports/generate`, { startDate: `2025-06-01T0${hour}:00:00Z`, endDate: `2025-06-01T0${hour + 1}:00:00Z` });
      assert.equal(r.statusCode, 202, r.body);
      return json<{ data: { id: string } }>(r).data.id;
    };
    const status = async (id: string) => json<{ data: { status: string } }>(await call(b.h, a, 'GET', `${BASE}/exports/${id}`)).data.status;

    test('the backlog waits on /metrics until a worker runs it; each run is counted by its outcome and timed', async () => {
      const before = await scrape();
      assert.equal(value(before, 'sdg_jobs_waiting{kind="export"}'), 0);
      assert.equal(value(before, 'sdg_jobs_total{kind="export",outcome="finished"}'), undefined, 'no runner in this process yet');
      const ok = await requestExport(1);
      const bad = await requestExport(2);
      failing = bad;
      const queued = await scrape();
      assert.equal(value(queued, 'sdg_jobs_waiting{kind="export"}'), 2);
      assert.equal(value(queued, 'sdg_jobs_held{kind="export"}'), 0);
      assert.equal(value(queued, 'sdg_jobs_waiting{kind="watchlist_batch"}'), 0);
      assert.equal(value(queued, 'sdg_jobs_waiting{kind="crawl_target"}'), 0);

      const runner = new JobRunner([exportJobKind(b.h.deps)], [], { pollMs: 20, owner: 'metrics-test', log: quiet, stats: b.h.deps.jobStats });
      const zero = await scrape();
      assert.equal(value(zero, 'sdg_jobs_total{kind="export",outcome="finished"}'), 0, 'the kind shows at zero once a runner has it');
      runner.start();
      try {
        await until('both exports end', 20_000, async () => (await status(ok)) === 'completed' && (await status(bad)) === 'failed');
      } finally {
        await runner.stop();
      }
      const done = await scrape();
      assert.equal(value(done, 'sdg_jobs_total{kind="export",outcome="finished"}'), 1);
      assert.equal(value(done, 'sdg_jobs_total{kind="export",outcome="retrying"}'), 2);
      assert.equal(value(done, 'sdg_jobs_total{kind="export",outcome="gave_up"}'), 1);
      assert.equal(value(done, 'sdg_jobs_total{kind="export",outcome="taken_over"}'), 0);
      assert.equal(value(done, 'sdg_job_duration_seconds_count{kind="export"}'), 4);
      assert.ok(value(done, 'sdg_job_duration_seconds_sum{kind="export"}')! > 0);
      assert.equal(value(done, 'sdg_job_duration_seconds_bucket{le="+Inf",kind="export"}'), 4);
      assert.equal(value(done, 'sdg_jobs_running{kind="export"}'), 0);
      assert.equal(value(done, 'sdg_jobs_waiting{kind="export"}'), 0);
      assert.equal(value(done, 'sdg_jobs_held{kind="export"}'), 0);
    });

    test('a job a worker holds counts as held, not waiting', async () => {
      const id = await requestExport(3);
      const { claimById } = await import('../../src/jobs/lease.js');
      assert.ok(await claimById(b.h.deps.store.db, exportLease, id, 'someone', 60_000));
      const text = await scrape();
      assert.equal(value(text, 'sdg_jobs_waiting{kind="export"}'), 0);
      assert.equal(value(text, 'sdg_jobs_held{kind="export"}'), 1);
    });
  });
}

describe('job runner outcomes on /metrics', () => {
  test('a lost lease, a failure at the last attempt and a failing periodic task are counted apart', async () => {
    const metrics = createMetrics();
    const script: Array<() => Promise<void>> = [
      async () => {
        throw new LeaseLostError(exportLease, '1');
      },
      async () => {
        throw new JobGaveUpError(3, new Error('no'));
      },
      async () => {
        throw new Error('once');
      },
      async () => undefined,
    ];
    let n = 0;
    const kind: JobKind = { name: 'probe', concurrency: 1, claim: async () => (n < script.length ? { id: String(n), perform: script[n++]! } : undefined) };
    let taskRuns = 0;
    const sweep = {
      name: 'sweep',
      run: async () => {
        taskRuns++;
        throw new Error('sweep failed');
      },
    };
    const runner = new JobRunner([kind], [sweep], {
      pollMs: 10,
      owner: 't',
      log: quiet,
      stats: metrics.jobs,
    });
    runner.start();
    try {
      await until('every scripted run ended', 5_000, () => [...Object.values(metrics.jobs.outcomes.get('probe')!)].reduce((x, y) => x + y, 0) === script.length);
    } finally {
      await runner.stop();
    }
    const text = await metrics.registry.metrics();
    assert.equal(value(text, 'sdg_jobs_total{kind="probe",outcome="taken_over"}'), 1);
    assert.equal(value(text, 'sdg_jobs_total{kind="probe",outcome="gave_up"}'), 1);
    assert.equal(value(text, 'sdg_jobs_total{kind="probe",outcome="retrying"}'), 1);
    assert.equal(value(text, 'sdg_jobs_total{kind="probe",outcome="finished"}'), 1);
    assert.equal(value(text, 'sdg_jobs_running{kind="probe"}'), 0);
    assert.ok(taskRuns >= 1);
    assert.equal(value(text, 'sdg_task_failures_total{task="sweep"}'), taskRuns);
  });

  test('a store that cannot be read leaves the backlog out of /metrics, not /metrics failing', async () => {
    const metrics = createMetrics();
    let reads = 0;
    watchBacklog(metrics.registry, async () => {
      reads++;
      throw new Error('connect ECONNREFUSED');
    });
    const text = await metrics.registry.metrics();
    assert.match(text, /# TYPE sdg_jobs_waiting gauge/);
    assert.equal(text.split('\n').filter((l) => l.startsWith('sdg_jobs_waiting{') || l.startsWith('sdg_jobs_held{')).length, 0);
    assert.match(text, /process_cpu_user_seconds_total/, 'the rest is there');
    assert.equal(reads, 1, 'one read for both series of a scrape');
  });

  test('a store that does not answer (a partition) holds /metrics for at most BACKLOG_READ_MS, then leaves the backlog out', async () => {
    const metrics = createMetrics();
    watchBacklog(metrics.registry, () => new Promise(() => undefined));
    // The wait's timer does not hold the process open (a server has its sockets): here, this does.
    const alive = setInterval(() => undefined, 1_000);
    const t0 = performance.now();
    const text = await metrics.registry.metrics().finally(() => clearInterval(alive));
    const took = performance.now() - t0;
    assert.ok(took >= BACKLOG_READ_MS - 50 && took < BACKLOG_READ_MS + 1_000, `took ${Math.round(took)} ms`);
    assert.equal(text.split('\n').filter((l) => l.startsWith('sdg_jobs_waiting{') || l.startsWith('sdg_jobs_held{')).length, 0);
    assert.match(text, /process_cpu_user_seconds_total/, 'the rest is there');
  });
});
