// A 1,000,000-line export (over 100 MB of gzip) uploaded to S3 with flat memory: the upload runs in
// a child process (upload-child.ts) that samples its own RSS; its growth stays under a fixed bound
// below the object's size, and moves little between a 250,000-line and a 1,000,000-line upload.
// The stored object is read back whole: every line is there.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createGunzip } from 'node:zlib';
import { S3ObjectStore } from '../../src/objects/s3-object-store.js';
import { LOCAL_S3_CREDENTIALS, startLocalS3, type LocalS3 } from '../../deploy/local-s3.js';
import { repoRoot } from '../helpers/processes.js';

const MB = 1024 * 1024;
/** Parts in flight (4 × 5 MiB), their copies in the SDK, gzip's window, and garbage not yet collected. */
const GROWTH_BOUND = 100 * MB;

interface ChildResult {
  lines: number;
  gzBytes: number;
  storedBytes: number;
  baselineRss: number;
  peakRss: number;
  seconds: number;
}

let s3: LocalS3;
before(async () => {
  s3 = await startLocalS3();
});
after(() => s3.close());

async function upload(lines: number): Promise<ChildResult> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', 'test/objects/upload-child.ts', String(lines)], {
    cwd: repoRoot,
    env: { ...process.env, ...s3.env, NODE_NO_WARNINGS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  assert.equal(code, 0, err);
  return JSON.parse(out.trim().split('\n').pop()!) as ChildResult;
}

test('a 1,000,000-line export goes to S3 in parts with flat memory, and comes back whole', { timeout: 300_000 }, async (t) => {
  const small = await upload(250_000);
  const big = await upload(1_000_000);
  const growth = (r: ChildResult) => r.peakRss - r.baselineRss;
  const report = `250k: +${(growth(small) / MB).toFixed(1)} MB for ${(small.gzBytes / MB).toFixed(1)} MB; 1M: +${(growth(big) / MB).toFixed(1)} MB for ${(big.gzBytes / MB).toFixed(1)} MB in ${big.seconds.toFixed(1)} s`;
  t.diagnostic(report);
  assert.equal(big.storedBytes, big.gzBytes, 'the stored object is the whole stream');
  assert.ok(big.gzBytes > 100 * MB, report);
  assert.ok(growth(big) < GROWTH_BOUND, report);
  // Four times the data (80 MB more), about the same memory: what grows is garbage the collector
  // has not reclaimed yet, which depends on the host's load, not the upload's size.
  assert.ok(growth(big) - growth(small) < 32 * MB, report);

  const store = new S3ObjectStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, publicEndpoint: undefined, credentials: LOCAL_S3_CREDENTIALS });
  try {
    let newlines = 0;
    let last = -1;
    for await (const chunk of store.createReadStream('exports/big/1.jsonl.gz').pipe(createGunzip())) {
      const b = chunk as Buffer;
      for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) newlines++;
      last = b[b.length - 1]!;
    }
    assert.equal(newlines, 1_000_000);
    assert.equal(last, 10);
  } finally {
    store.close();
  }
});
