// The export helpers against the real gateway: generate, wait with progress, download streaming to a
// file, and the SHA-256 checked (a file altered on the way is refused and not kept).
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { ConflictError, ExportError, SdgClient, WaitTimeoutError, type DownloadProgress } from '../../sdk/src/index.js';
import { startGateway, type Gateway } from './gateway.js';

describe('export helpers', () => {
  let g: Gateway;
  let client: SdgClient;
  let dir: string;
  const end = new Date();
  const range = { startDate: new Date(end.getTime() - 24 * 3_600_000).toISOString(), endDate: end.toISOString() };

  before(async () => {
    g = await startGateway();
    const a = await g.account();
    client = new SdgClient({ apiKey: a.apiKey, baseUrl: g.url });
    dir = mkdtempSync(join(tmpdir(), 'sdk-export-'));
    await client.addAllToWatchlist([{ username: g.sample.usernames[0]! }], { intervalMs: 20 });
    // The new account's first crawl backfills its last days of tweets.
    const deadline = Date.now() + 30_000;
    while (!((await client.crawlStatus()).data.lastCompletedCycle?.tweetsIngested ?? 0)) {
      if (Date.now() > deadline) throw new Error('the first crawl did not complete');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  after(async () => {
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('exportToFile generates, waits (progress), downloads (progress) and verifies the sha256', async () => {
    const states: string[] = [];
    const bytes: DownloadProgress[] = [];
    const path = join(dir, 'day.jsonl.gz');
    const file = await client.exportToFile(range, path, { intervalMs: 20, onProgress: (r) => states.push(r.status), onDownloadProgress: (p) => bytes.push(p) });
    assert.equal(states.at(-1), 'completed');
    const content = readFileSync(path);
    assert.equal(file.sha256, createHash('sha256').update(content).digest('hex'));
    assert.equal(file.sha256, file.export.sha256);
    assert.equal(file.sizeBytes, content.length);
    assert.deepEqual(bytes.at(-1), { bytes: content.length, totalBytes: content.length });
    const lines = gunzipSync(content).toString('utf8').trim().split('\n');
    const record = (await client.getExport(file.export.id)).data;
    assert.ok(lines.length >= 24, `a day of an hourly account: ${lines.length} tweets`);
    assert.equal(lines.length, record.tweetCount);
    assert.equal(JSON.parse(lines[0]!).authorId, g.sample.userIds[0]);
    assert.equal(existsSync(`${path}.part`), false);
  });

  test('a download whose bytes differ from the record is refused, and no file is left', async () => {
    const { data: done } = await client.latestExport();
    let altered = 0;
    const tamper: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!new Request(input, init).url.includes('/downloads/')) return res;
      const body = new Uint8Array(await res.arrayBuffer());
      body[body.length - 1] = body[body.length - 1]! ^ 0xff;
      altered++;
      return new Response(body, { status: 200, headers: res.headers });
    };
    const bad = new SdgClient({ ...client.options, fetch: tamper });
    const path = join(dir, 'tampered.jsonl.gz');
    await assert.rejects(bad.downloadExport(done.id, path), (e: unknown) => {
      assert.ok(e instanceof ExportError);
      assert.match(e.message, /SHA-256/);
      assert.equal(e.exportId, done.id);
      return true;
    });
    assert.equal(altered, 1);
    assert.equal(existsSync(path), false);
    assert.equal(existsSync(`${path}.part`), false);
  });

  test('downloading an export that is not completed is a ConflictError (export_not_ready)', async () => {
    await g.stopJobs();
    try {
      const { data } = await client.generateExport({ startDate: range.startDate, endDate: new Date(end.getTime() - 3_600_000).toISOString() });
      assert.equal((await client.getExport(data.id)).data.status, 'queued');
      await assert.rejects(client.downloadExport(data.id, join(dir, 'early.jsonl.gz')), (e: unknown) => e instanceof ConflictError && e.code === 'export_not_ready');
      await assert.rejects(client.waitForExport(data.id, { intervalMs: 20, timeoutMs: 100 }), (e: unknown) => e instanceof WaitTimeoutError && /did not finish within 100 ms/.test(e.message) && e.exportId === data.id && e.batchId === undefined);
    } finally {
      await g.startJobs();
    }
  });
});
