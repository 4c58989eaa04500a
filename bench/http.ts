// HTTP throughput and latency: our authenticated endpoints against bare Fastify, in the same run,
// each server in its own process and autocannon in this one.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { freePort, repoRoot, runSdg, startServer } from '../test/helpers/processes.js';

export interface HttpResult {
  name: string;
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
}

async function load(name: string, url: string, headers: Record<string, string>, seconds: number, connections: number): Promise<HttpResult> {
  await autocannon({ url, headers, connections, duration: 2 }); // warm-up (JIT, caches)
  const r = await autocannon({ url, headers, connections, duration: seconds });
  return { name, requestsPerSec: Math.round(r.requests.average), p50Ms: r.latency.p50, p99Ms: r.latency.p99, non2xx: r.non2xx + r.errors };
}

export async function benchHttp(opts: { seconds?: number; connections?: number } = {}): Promise<HttpResult[]> {
  const seconds = opts.seconds ?? 10;
  const connections = opts.connections ?? 50;
  const results: HttpResult[] = [];

  const port = await freePort();
  const bare = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-server.ts'], { cwd: repoRoot, env: { ...process.env, PORT: String(port) }, stdio: 'inherit' });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/hello`)).ok) break;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  results.push(await load('bare Fastify GET /hello', `http://127.0.0.1:${port}/hello`, {}, seconds, connections));
  bare.kill('SIGTERM');

  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-bench-'));
  const env = { DATA_DIR: dataDir, ROLES: 'api', LOG_LEVEL: 'warn', CACHE_TWEET_SECONDS: '86400' };
  const server = await startServer(env);
  try {
    const created = await runSdg(['accounts', 'create', '--name', 'bench', '--credits', '1000000000000', '--rate-limit-per-minute', '100000000', '--json'], env);
    const { apiKey } = JSON.parse(created.stdout) as { apiKey: string };
    const sample = JSON.parse((await runSdg(['demo', 'sample', '--json'], env)).stdout) as { tweetIds: string[] };
    const headers = { 'x-api-key': apiKey };
    results.push(await load('ours GET /echo/v1/hello (authenticated, metered, 0 credits)', `${server.url}/echo/v1/hello`, headers, seconds, connections));
    const tweetUrl = `${server.url}/social/v1/tweets/${sample.tweetIds[0]}`;
    await fetch(tweetUrl, { headers }); // first call fills the store; the rest are cache hits
    results.push(await load('ours GET /social/v1/tweets/{id} (authenticated, charged 100, cached)', tweetUrl, headers, seconds, connections));
  } finally {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchHttp(), null, 2));
}
