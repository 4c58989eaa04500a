// Two builds of the server on one endpoint, measured in turns (A, B, A, B...): for effects smaller
// than the host's drift between the rounds of `npm run bench`, which keeps each row's best round
// (where-the-time-goes, 2026-11-29: effects under about 20% were lost in it). Each build has a store
// of its own; for every pair both are started afresh and pinned to the servers' CPU as in
// bench/http.ts, and only the one measured has load. Prints each pair, then the medians and in how
// many pairs B spent less CPU.
//
//   cp -r dist dist-A              # the build before the change, inside the repository (its
//                                  # imports resolve from node_modules here)
//   node scripts/build.mjs         # the build after, in dist
//   node --import tsx bench/ab.ts dist-A dist
//
// AB_ENDPOINT: ascii (default; the charged, cached tweet), wide (its text beyond Latin-1) or echo.
// AB_BACKEND: embedded (default) or postgres (BENCH_DATABASE_URL, BENCH_REDIS_URL as in http.ts).
// AB_PAIRS: pairs of runs (default 6). BENCH_SECONDS: each run's length (default 6).
// AB_FLAGS_B="--flag ...": Node flags B's server gets after the shipped ones (A gets the shipped ones
// only): a flag measured before it is shipped, with the same build on both sides (dist dist).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, type ServerProcess } from '../test/helpers/processes.js';
import { benchKeys, benchStore, benchTweets, fillTweet, load, pinStores, serverEnv, startOurs, type HttpResult } from './http.js';

type Endpoint = 'ascii' | 'wide' | 'echo';

interface Side {
  name: string;
  server: ServerProcess;
  url: string;
  headers: Record<string, string>;
}

export interface AbPair {
  a: HttpResult;
  b: HttpResult;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export async function benchAb(opts: { builds: [string, string]; endpoint?: Endpoint; backend?: 'embedded' | 'postgres'; pairs?: number; seconds?: number; flagsB?: string[] }): Promise<AbPair[]> {
  for (const build of opts.builds) if (!existsSync(join(repoRoot, build, 'src/cli/main.js'))) throw new Error(`${build}/src/cli/main.js not found: give build folders of this repository (dist, or a copy such as dist-A)`);
  const endpoint = opts.endpoint ?? 'ascii';
  const backend = opts.backend ?? 'embedded';
  const seconds = opts.seconds ?? 6;
  const stores = [await benchStore(backend), await benchStore(backend)];
  let servers: ServerProcess[] = [];
  let unpinStores = async (): Promise<void> => undefined;
  try {
    // Keys and the tweets once; the servers afresh for every pair (below).
    const made = [];
    for (let i = 0; i < 2; i++) {
      const env = serverEnv(stores[i]!.env);
      const [key] = await benchKeys(env, 1);
      made.push({ env, key: key!, tweets: await benchTweets(env) });
    }
    if (backend === 'postgres') unpinStores = await pinStores();
    const pairs: AbPair[] = [];
    for (let p = 0; p < (opts.pairs ?? 6); p++) {
      // Fresh processes for each pair: one process's runs can sit apart from another's for many runs
      // (two copies of one build, each started once, were 10% apart in 5 of 6 pairs of the echo),
      // which a pair of long-lived servers would report as the builds' difference.
      const sides: Side[] = [];
      for (let i = 0; i < 2; i++) {
        const { env, key, tweets } = made[i]!;
        const server = await startOurs(env, opts.builds[i], i === 1 ? (opts.flagsB ?? []) : []);
        servers.push(server);
        for (const kind of ['ascii', 'wide'] as const) await fillTweet(`${server.url}${tweets[kind]}`, key, kind);
        const path = endpoint === 'echo' ? '/echo/v1/hello' : tweets[endpoint];
        sides.push({ name: `${opts.builds[i]} ${endpoint} (${backend})`, server, url: `${server.url}${path}`, headers: { 'x-api-key': key } });
      }
      const run = (s: Side) => load(s.name, s.server.child.pid!, s.url, s.headers, seconds, 50, undefined, `${s.server.url}/metrics`);
      // Which goes first alternates too: a build always measured second would always follow the other's load.
      let pair: AbPair;
      if (p % 2 === 0) {
        const a = await run(sides[0]!);
        pair = { a, b: await run(sides[1]!) };
      } else {
        const b = await run(sides[1]!);
        pair = { a: await run(sides[0]!), b };
      }
      for (const s of servers) await s.stop();
      servers = [];
      pairs.push(pair);
      console.error(`pair ${p + 1}: A ${pair.a.cpuUsPerRequest} µs CPU/request (GC ${pair.a.gc?.usPerRequest ?? '?'}), ${pair.a.requestsPerSec} req/s; B ${pair.b.cpuUsPerRequest} µs (GC ${pair.b.gc?.usPerRequest ?? '?'}), ${pair.b.requestsPerSec} req/s`);
    }
    return pairs;
  } finally {
    await unpinStores();
    for (const s of servers) await s.stop();
    for (const s of stores) await s.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [a, b] = process.argv.slice(2);
  if (!a || !b) throw new Error('usage: node --import tsx bench/ab.ts <build A> <build B>   (folders such as dist-A and dist)');
  const endpoint = (process.env.AB_ENDPOINT ?? 'ascii') as Endpoint;
  if (!['ascii', 'wide', 'echo'].includes(endpoint)) throw new Error(`AB_ENDPOINT must be ascii, wide or echo, not ${endpoint}`);
  const backend = process.env.AB_BACKEND === 'postgres' ? 'postgres' : 'embedded';
  const pairs = await benchAb({ builds: [a, b], endpoint, backend, pairs: Number(process.env.AB_PAIRS ?? 6), seconds: Number(process.env.BENCH_SECONDS ?? 6), flagsB: (process.env.AB_FLAGS_B ?? '').split(/\s+/).filter(Boolean) });
  const cpuA = median(pairs.map((p) => p.a.cpuUsPerRequest));
  const cpuB = median(pairs.map((p) => p.b.cpuUsPerRequest));
  const lower = pairs.filter((p) => p.b.cpuUsPerRequest < p.a.cpuUsPerRequest).length;
  console.log(`${endpoint} on ${backend}: CPU a request, median of ${pairs.length} pairs: A (${a}) ${cpuA.toFixed(1)} µs, B (${b}) ${cpuB.toFixed(1)} µs (B/A ${(cpuB / cpuA).toFixed(3)}); B lower in ${lower} of ${pairs.length} pairs`);
  console.log(`throughput, median: A ${median(pairs.map((p) => p.a.requestsPerSec))}, B ${median(pairs.map((p) => p.b.requestsPerSec))} requests/s`);
}
