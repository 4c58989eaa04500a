// `sdg worker` and `sdg scheduler` say what they do: a line when each job starts and ends, with its
// counts (batches, exports, crawl cycles), readable by default and JSON with --json.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createExport } from '../../src/exports/export-repo.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { createBatch } from '../../src/watchlist/batch-repo.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { freePort, repoRoot, stopChild } from '../helpers/processes.js';

interface Proc {
  child: ChildProcess;
  out(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<number | null>;
}

function sdg(args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'info', JOBS_POLL_MS: '50', DEMO_SEED: '1', DEMO_USER_COUNT: '2000', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return {
    child,
    out: () => out,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = out.split('\n').find((l) => pattern.test(l));
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`sdg ${args.join(' ')} exited (${child.exitCode}): ${out}`);
        if (Date.now() > deadline) throw new Error(`no line matching ${pattern} in: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: () => stopChild(child),
  };
}

describe('worker and scheduler logs', () => {
  let ts: TestStore;
  let accountId: string;
  const procs: Proc[] = [];
  const source = new DemoSource({ seed: 1, userCount: 2000 });
  const sample = demoSample(source, new Date());

  before(async () => {
    ts = await createTestStore('sqlite');
    await migrateToLatest(ts.store);
    accountId = (await createAccount(ts.store.db, { name: 'logs', planId: 'free' })).accountId;
    const now = new Date();
    await createBatch(ts.store.db, { id: 'wlb_logs', accountId, operation: 'add', items: [{ socialUserId: null, username: sample.usernames[0]! }, { socialUserId: '999999999999', username: null }], now: now.toISOString() });
    await createExport(ts.store.db, { id: '424242', accountId, start: new Date(now.getTime() - 86_400_000).toISOString(), end: now.toISOString(), now: now.toISOString() });
  });
  after(async () => {
    for (const p of procs) await p.stop();
    await ts.dispose();
  });

  test('the worker logs each batch and export as it starts and ends, with counts, in readable lines', async () => {
    const w = sdg(['worker'], ts.env);
    procs.push(w);
    await w.waitFor(/INFO\s+worker started/);
    await w.waitFor(/INFO\s+watchlist_batch started job=watchlist_batch id=wlb_logs attempt=1/);
    const done = await w.waitFor(/watchlist_batch finished/);
    assert.match(done, /status=completed total=2 processed=2 succeeded=1 failed=1 ms=\d+/);
    await w.waitFor(/export started job=export id=424242/);
    assert.match(await w.waitFor(/export finished/), /status=completed tweetCount=\d+ sizeBytes=\d+/);
    assert.equal(await w.stop(), 0);
    assert.match(w.out(), /worker stopped/);
    assert.doesNotMatch(w.out(), /^\{/m, 'readable, not JSON');
  });

  test('with METRICS_PORT, a worker serves its health and its jobs on /metrics there, and nothing of the API', async () => {
    const port = await freePort();
    const w = sdg(['worker'], { ...ts.env, METRICS_PORT: String(port) });
    procs.push(w);
    await w.waitFor(new RegExp(`serving /healthz, /readyz and /metrics \\(METRICS_PORT\\) port=${port}`));
    const now = new Date();
    await createExport(ts.store.db, { id: '434343', accountId, start: new Date(now.getTime() - 86_400_000).toISOString(), end: now.toISOString(), now: now.toISOString() });
    await w.waitFor(/export finished job=export id=434343/);
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const text = await (await fetch(`${base}/metrics`)).text();
    // This worker's own runs: the export above, and the earlier test's if it ran alone.
    const exports = w.out().split('\n').filter((l) => /export finished/.test(l)).length;
    assert.ok(exports >= 1);
    assert.match(text, new RegExp(`^sdg_jobs_total\\{kind="export",outcome="finished"\\} ${exports}$`, 'm'));
    assert.match(text, new RegExp(`^sdg_job_duration_seconds_count\\{kind="export"\\} ${exports}$`, 'm'));
    assert.match(text, /^sdg_jobs_waiting\{kind="export"\} 0$/m);
    assert.match(text, /^sdg_jobs_total\{kind="crawl_target",outcome="finished"\} 0$/m);
    // The API is not served from a worker, keyed or public.
    const api = await fetch(`${base}/api/v1/credits/balance`, { headers: { 'x-api-key': 'sdg_live_x' } });
    assert.equal(api.status, 404);
    assert.equal((await fetch(`${base}/`)).status, 404);
    assert.equal((await fetch(`${base}/docs`)).status, 404);

    // A scheduler given the same METRICS_PORT stops at start, naming the variable.
    const s = sdg(['scheduler'], { ...ts.env, METRICS_PORT: String(port) });
    const code = await new Promise<number | null>((res) => s.child.on('exit', res));
    assert.equal(code, 1);
    assert.match(s.out(), new RegExp(`METRICS_PORT ${port} is already in use on 127\\.0\\.0\\.1`));
    assert.equal(await w.stop(), 0);
  });

  test('with --json, the scheduler logs a crawl cycle starting and finishing with its totals', async () => {
    const s = sdg(['scheduler', '--json'], ts.env);
    const w = sdg(['worker', '--json'], ts.env);
    procs.push(s, w);
    const started = JSON.parse(await s.waitFor(/"crawl cycle started"/)) as Record<string, unknown>;
    assert.equal(started.job, 'crawl_cycle');
    assert.equal(started.accountsTargeted, 1);
    const finished = JSON.parse(await s.waitFor(/"crawl cycle finished"/)) as Record<string, number | string>;
    assert.equal(finished.id, started.id);
    assert.equal(finished.accountsCompleted, 1);
    assert.equal(finished.accountsFailed, 0);
    assert.ok(Number(finished.tweetsIngested) > 0);
    assert.equal(await s.stop(), 0);
    assert.equal(await w.stop(), 0);
    for (const line of s.out().trim().split('\n')) JSON.parse(line);
  });
});
