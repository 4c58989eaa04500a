// The scale-out topology as separate processes (deploy/topology.ts): two API processes (ROLES=api),
// one worker, one scheduler, on one Postgres, one Redis and one S3 server (s3rver behind a
// signature-enforcing front), with a round-robin proxy in front. Runs only with TEST_DATABASE_URL and
// TEST_REDIS_URL. What one API process does, the other sees: keys, revocations, the rate limit,
// batches, exports and their links; a worker killed with SIGKILL mid-export is replaced by another
// that finishes it; 10,000 charged calls over both processes on credits for exactly 2,500.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startTopology, type Topology } from '../../deploy/topology.js';
import { createPostgresSchema } from '../helpers/backends.js';
import { runSdg, until } from '../helpers/processes.js';

const enabled = !!process.env.TEST_DATABASE_URL && !!process.env.TEST_REDIS_URL;
const BASE = '/social/v1/bulk-export';

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function api(url: string, key: string, method: 'GET' | 'POST' | 'DELETE', path: string, payload?: unknown): Promise<Answer> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { body: JSON.stringify(payload) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
const data = <T>(a: Answer): T => (a.body as { data: T }).data;

describe('the topology: 2 API processes, a worker and a scheduler on Postgres, Redis and S3', { skip: !enabled && 'needs TEST_DATABASE_URL and TEST_REDIS_URL' }, () => {
  let t: Topology;
  let schema: { url: string; drop(): Promise<void> };
  let db: pg.Client;
  let api1: string;
  let api2: string;
  let userIds: string[];
  const account = async (credits: number, ratePerMinute: number) => {
    const r = await runSdg(['accounts', 'create', '--name', 'topology', '--credits', String(credits), '--rate-limit-per-minute', String(ratePerMinute), '--json'], { DATABASE_URL: schema.url });
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as { accountId: string; apiKey: string };
  };

  before(async () => {
    schema = await createPostgresSchema(process.env.TEST_DATABASE_URL!, 'topo');
    t = await startTopology({
      databaseUrl: schema.url,
      redisUrl: process.env.TEST_REDIS_URL!,
      env: {
        COSTS: JSON.stringify({ echoHello: 1 }),
        AUTH_FAILURES_PER_MINUTE: '1000000',
        JOBS_POLL_MS: '100',
        // A killed worker's export is taken over once its lease lapses.
        JOBS_LEASE_SECONDS: '2',
      },
      // Slow exports (pages of 2 tweets, 150 ms apart), so one can be interrupted.
      workerEnv: { EXPORT_PAGE_SIZE: '2', EXPORT_PAGE_DELAY_MS: '150' },
    });
    api1 = t.apis[0]!.url!;
    api2 = t.apis[1]!.url!;
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    const sample = await runSdg(['demo', 'sample', '--json'], { DATABASE_URL: schema.url });
    userIds = (JSON.parse(sample.stdout) as { userIds: string[] }).userIds;
  });
  after(async () => {
    await db?.end();
    await t?.stop();
    await schema?.drop();
  });

  test('a key made through one API process works on the other; revoked through one, the other refuses it', async (tc) => {
    const a = await account(1_000, 1_000_000);
    const made = await api(api1, a.apiKey, 'POST', '/api/v1/api-keys', { name: 'second' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const k = data<{ id: string; key: string }>(made);
    assert.equal((await api(api2, k.key, 'GET', '/echo/v1/hello')).status, 200);
    // Through the proxy too: one address for both.
    assert.equal((await api(t.proxyUrl!, k.key, 'GET', '/echo/v1/hello')).status, 200);

    const del = await api(api1, a.apiKey, 'DELETE', `/api/v1/api-keys/${k.id}`);
    assert.ok(del.status === 200 || del.status === 204, JSON.stringify(del.body));
    const t0 = Date.now();
    // Within 5 s here; the 1 s bound belongs to the key cache's own work (issue #12).
    await until('the revoked key refused by the other process', 5_000, async () => (await api(api2, k.key, 'GET', '/echo/v1/hello')).status === 401, 20);
    tc.diagnostic(`revocation seen by the other process after ${Date.now() - t0} ms`);
    assert.equal((await api(api1, k.key, 'GET', '/echo/v1/hello')).status, 401);
  });

  test('the rate limit is shared: 10 a minute over both processes, not 10 each', async () => {
    const a = await account(1_000, 10);
    const statuses: Array<[number, number]> = [];
    const t0 = Date.now();
    for (let i = 0; i < 30; i++) {
      const which = i % 2;
      statuses.push([which, (await api(which ? api2 : api1, a.apiKey, 'GET', '/echo/v1/hello')).status]);
    }
    const ok = statuses.filter(([, s]) => s === 200).length;
    // A token refills every 6 s while the calls run; limits kept per process would let 20 through.
    const refills = Math.ceil((Date.now() - t0) / 6_000);
    assert.ok(ok >= 10 && ok <= 10 + refills, `${ok} passed in ${Date.now() - t0} ms: ${JSON.stringify(statuses)}`);
    assert.ok(statuses.some(([w, s]) => w === 0 && s === 429) && statuses.some(([w, s]) => w === 1 && s === 429), JSON.stringify(statuses));
  });

  let exportRange: { startDate: string; endDate: string };
  let first: { id: string; sha256: string; sizeBytes: number; tweetCount: number };
  let owner: { accountId: string; apiKey: string };

  test('a batch added through one process is read through the other; an export made through one downloads from the link the other gives', async (tc) => {
    owner = await account(1_000, 1_000_000);
    const watched = userIds.slice(0, 5);
    const b = await api(api1, owner.apiKey, 'POST', `${BASE}/watchlist/batch`, { items: watched.map((socialUserId) => ({ socialUserId })) });
    assert.equal(b.status, 202, JSON.stringify(b.body));
    const batchId = data<{ batchId: string }>(b).batchId;
    const seen = await api(api2, owner.apiKey, 'GET', `${BASE}/watchlist/batch/${batchId}`);
    assert.equal(seen.status, 200);
    assert.equal(data<{ batchId: string }>(seen).batchId, batchId);
    await until('the batch completed (by the worker)', 30_000, async () => data<{ status: string }>(await api(api2, owner.apiKey, 'GET', `${BASE}/watchlist/batch/${batchId}`)).status === 'completed');
    // The worker backfills each newly watched account.
    await until('the watched accounts crawled', 60_000, async () => {
      const r = await db.query<{ n: string }>(`select count(distinct social_user_id) as n from crawl_targets where status = 'completed' and social_user_id = any($1)`, [watched]);
      return Number(r.rows[0]!.n) === watched.length;
    });

    const end = new Date(Math.floor(Date.now() / 1000) * 1000);
    exportRange = { startDate: new Date(end.getTime() - 24 * 3_600_000).toISOString(), endDate: end.toISOString() };
    const g = await api(api1, owner.apiKey, 'POST', `${BASE}/exports/generate`, exportRange);
    assert.equal(g.status, 202, JSON.stringify(g.body));
    const id = data<{ id: string }>(g).id;
    first = await until('the export completed', 60_000, async () => {
      const r = data<{ status: string; id: string; sha256: string; sizeBytes: number; tweetCount: number }>(await api(api2, owner.apiKey, 'GET', `${BASE}/exports/${id}`));
      return r.status === 'completed' && r;
    });
    tc.diagnostic(`export of ${first.tweetCount} tweets`);
    // Pages of 2, 150 ms apart: over a second of writing to interrupt.
    assert.ok(first.tweetCount >= 16, `${first.tweetCount} tweets: enough pages to interrupt`);
    const link = data<{ url: string; sha256: string }>(await api(api2, owner.apiKey, 'GET', `${BASE}/exports/${id}/download`));
    assert.ok(link.url.startsWith(`${t.s3!.endpoint}/`), link.url);
    const file = await fetch(link.url);
    assert.equal(file.status, 200);
    const bytes = Buffer.from(await file.arrayBuffer());
    assert.equal(bytes.length, first.sizeBytes);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), first.sha256);
    // The link is the object store's own: without its signature the store refuses.
    assert.equal((await fetch(link.url.split('?')[0]!)).status, 403);
  });

  test('kill -9 the worker mid-export: a second worker finishes it, with the same file', async () => {
    const g = await api(api2, owner.apiKey, 'POST', `${BASE}/exports/generate`, exportRange);
    assert.equal(g.status, 202);
    const id = data<{ id: string }>(g).id;
    await until('the export running on worker 1', 30_000, async () => {
      const r = await db.query<{ status: string; started_at: string | null }>('select status, started_at from exports where id = $1', [id]);
      return r.rows[0]?.status === 'running' && r.rows[0].started_at !== null;
    }, 10);
    await t.workers[0]!.kill('SIGKILL');
    const mid = await db.query<{ status: string }>('select status from exports where id = $1', [id]);
    assert.equal(mid.rows[0]!.status, 'running', 'killed before it completed');
    const second = await t.startWorker();
    const done = await until('the export completed by worker 2', 60_000, async () => {
      const r = data<{ status: string; sha256: string; sizeBytes: number; tweetCount: number }>(await api(api1, owner.apiKey, 'GET', `${BASE}/exports/${id}`));
      return r.status === 'completed' && r;
    });
    const row = await db.query<{ attempts: number }>('select attempts from exports where id = $1', [id]);
    assert.equal(Number(row.rows[0]!.attempts), 2, 'claimed again after the lease lapsed');
    assert.equal(done.tweetCount, first.tweetCount);
    assert.equal(done.sha256, first.sha256, 'the same range gives the same file');
    const link = data<{ url: string }>(await api(api1, owner.apiKey, 'GET', `${BASE}/exports/${id}/download`));
    const bytes = Buffer.from(await (await fetch(link.url)).arrayBuffer());
    assert.equal(createHash('sha256').update(bytes).digest('hex'), first.sha256);
    // The second worker's METRICS_PORT counts the run it finished; an API process sees no export left held.
    const m = await (await fetch(`${second.url}/metrics`)).text();
    assert.match(m, /^sdg_jobs_total\{kind="export",outcome="finished"\} 1$/m);
    assert.match(await (await fetch(`${api1}/metrics`)).text(), /^sdg_jobs_held\{kind="export"\} 0$/m);
  });

  test('10,000 charged calls over both processes on credits for exactly 2,500: 2,500 succeed, the rest 402, balance 0, ledger = balance', async (tc) => {
    const a = await account(2_500, 100_000_000);
    const counts = new Map<number, number>();
    let next = 0;
    const t0 = Date.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        for (let i = next++; i < 10_000; i = next++) {
          const r = await fetch(`${i % 2 ? api2 : api1}/echo/v1/hello`, { headers: { 'x-api-key': a.apiKey } });
          await r.arrayBuffer();
          counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
        }
      }),
    );
    tc.diagnostic(`10,000 calls in ${Date.now() - t0} ms: ${JSON.stringify(Object.fromEntries(counts))}`);
    assert.deepEqual(Object.fromEntries(counts), { 200: 2_500, 402: 7_500 });
    const bal = await api(api1, a.apiKey, 'GET', '/api/v1/credits/balance');
    assert.equal(data<{ balance: number }>(bal).balance, 0);
    const l = await db.query<{ sum: string; charges: string }>(`select coalesce(sum(amount), 0) as sum, count(*) filter (where kind = 'charge') as charges from ledger_entries where account_id = $1`, [a.accountId]);
    assert.equal(Number(l.rows[0]!.sum), 0, 'the ledger sums to the balance');
    assert.equal(Number(l.rows[0]!.charges), 2_500);
    const acc = await db.query<{ balance: string }>('select balance from accounts where id = $1', [a.accountId]);
    assert.equal(Number(acc.rows[0]!.balance), 0);
  });
});
