// Set-up shared by the object-store tests: the real app on a fresh store with exports on the local
// directory or on a local S3 (s3rver behind a signature-enforcing front, deploy/local-s3.ts), the
// demo network on an injected clock that starts at the real time (presigned URLs are checked by the
// S3 server against its own clock), and an export of one watched account's last day.
import assert from 'node:assert/strict';
import { defaultRetryPolicy } from '../../src/sources/resilience.js';
import type { Dialect } from '../../src/db/connect.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample } from '../../src/sources/demo/sample.js';
import { drainBulkWork } from '../../src/wiring/drain-jobs.js';
import { startHarness, json, type Harness, type TestAccount } from '../helpers/harness.js';
import { useSource } from '../helpers/social.js';
import { BASE, call, HOUR, TestClock } from '../bulk/helpers.js';
import type { LocalS3 } from '../../deploy/local-s3.js';

export type StoreKind = 'local' | 's3';

export interface ExportRec {
  id: string;
  status: string;
  sizeBytes: number | null;
  sha256: string | null;
  completedAt: string | null;
  expiredAt: string | null;
}
export interface Link {
  id: string;
  url: string;
  expiresAt: string;
  sizeBytes: number;
  sha256: string;
}

export interface ObjectsHarness {
  h: Harness;
  clock: TestClock;
  userIds: string[];
  close(): Promise<void>;
}

/** The SDK's default chain reads these; the gateway is given no credentials of its own. */
export function useLocalS3Credentials(s3: LocalS3): void {
  process.env.AWS_ACCESS_KEY_ID = s3.env.AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = s3.env.AWS_SECRET_ACCESS_KEY;
}

export async function objectsHarness(backend: Dialect, s3: LocalS3 | undefined, env: Record<string, string> = {}): Promise<ObjectsHarness> {
  const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
  const source = new DemoSource({ seed: 11, userCount: 2_000, now: clock.now });
  const s3Env: Record<string, string> = s3 ? { S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_FORCE_PATH_STYLE: 'true' } : {};
  if (s3) useLocalS3Credentials(s3);
  const h = await startHarness(backend, { CRAWL_INTERVAL_HOURS: '1', ...s3Env, ...env }, (deps) => {
    useSource(source, () => clock.ms)(deps);
    deps.bulk.clock = clock.now;
    deps.bulk.retry = { ...defaultRetryPolicy, baseDelayMs: 5, maxDelayMs: 20 };
  });
  return { h, clock, userIds: demoSample(source, clock.now()).userIds, close: () => h.close() };
}

/** Watches `userId` (crawled at once), exports its last 24 h, runs the export; the completed record. */
export async function completedExport(o: ObjectsHarness, a: TestAccount, userId: string): Promise<ExportRec> {
  let res = await call(o.h, a, 'POST', `${BASE}/watchlist/batch`, { items: [{ socialUserId: userId }] });
  assert.equal(res.statusCode, 202, res.body);
  await drainBulkWork(o.h.deps);
  const end = new Date(o.clock.ms).toISOString();
  const start = new Date(o.clock.ms - 24 * HOUR).toISOString();
  res = await call(o.h, a, 'POST', `${BASE}/exports/generate`, { startDate: start, endDate: end });
  assert.equal(res.statusCode, 202, res.body);
  const id = json<{ data: ExportRec }>(res).data.id;
  await drainBulkWork(o.h.deps, { crawl: false });
  res = await call(o.h, a, 'GET', `${BASE}/exports/${id}`);
  const rec = json<{ data: ExportRec }>(res).data;
  assert.equal(rec.status, 'completed', res.body);
  assert.ok(rec.sizeBytes! > 100, 'the export has content');
  return rec;
}

export async function downloadLink(o: ObjectsHarness, a: TestAccount, id: string): Promise<Link> {
  const res = await call(o.h, a, 'GET', `${BASE}/exports/${id}/download`);
  assert.equal(res.statusCode, 200, res.body);
  return json<{ data: Link }>(res).data;
}
