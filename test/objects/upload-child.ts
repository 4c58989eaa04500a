// Child process of flat-memory.test.ts: streams a 1,000,000-line export (JSON Lines, gzip) into the
// object store configured by the environment (S3_BUCKET…), in pages of 2,000 lines as the export job
// reads them, and prints its peak RSS against the RSS before the upload as one JSON line.
import { randomBytes } from 'node:crypto';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { loadConfig } from '../../src/config/config.js';
import { buildObjectStore } from '../../src/objects/build-object-store.js';

const LINES = Number(process.argv[2] ?? 1_000_000);
const PAGE = 2_000;
const config = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const objects = await buildObjectStore(config);
// Warm up (the SDK's modules, a connection) so the baseline holds everything but the upload itself.
await objects.put('exports/warm/up.jsonl.gz', Readable.from([Buffer.from('warm')]));
(globalThis as { gc?: () => void }).gc?.();
const baselineRss = process.memoryUsage().rss;
let peakRss = baselineRss;
const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 10);

async function* pages(): AsyncGenerator<Buffer> {
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  for (let i = 0; i < LINES; i += PAGE) {
    let text = '';
    // Random text, so gzip cannot shrink the file to nothing: the object is far larger than the bound.
    const noise = randomBytes(96 * PAGE).toString('base64');
    for (let j = i; j < Math.min(LINES, i + PAGE); j++) {
      const k = (j - i) * 128;
      text += `{"id":"${1_800_000_000_000_000_000n + BigInt(j)}","authorId":"7${j % 5000}","createdAt":"${new Date(t0 + j * 80).toISOString()}","text":"${noise.slice(k, k + 128)}"}\n`;
    }
    yield Buffer.from(text);
    // Let the sampler run between pages, as the export's database reads do.
    await new Promise((r) => setImmediate(r));
  }
}

let rawBytes = 0;
let gzBytes = 0;
const meter = new Transform({
  transform(chunk: Buffer, _e, cb) {
    gzBytes += chunk.length;
    cb(null, chunk);
  },
});
const raw = Readable.from(pages());
raw.on('data', (c: Buffer) => (rawBytes += c.length));
const body = pipeline(raw, createGzip({ level: 1 }), meter, () => undefined);
const t = performance.now();
const info = await objects.put('exports/big/1.jsonl.gz', body);
clearInterval(timer);
peakRss = Math.max(peakRss, process.memoryUsage().rss);
objects.close?.();
console.log(JSON.stringify({ lines: LINES, rawBytes, gzBytes, storedBytes: info.sizeBytes, baselineRss, peakRss, seconds: (performance.now() - t) / 1000 }));
