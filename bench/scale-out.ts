// Only the scale-out part of `npm run bench`: the HTTP calls on Postgres + Redis, one account, 50
// accounts, two API processes (BENCH_SECONDS, BENCH_ROUNDS; BENCH_DATABASE_URL, BENCH_REDIS_URL).
// Prints the rows of docs/benchmarks.md's Postgres table. Build first: `node scripts/build.mjs`.
import { benchHttp } from './http.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const ratio = (x: number, y: number) => (x / y).toFixed(2);
for (const [label, o] of [
  ['one account', {}],
  ['50 accounts', { accounts: 50 }],
  ['one account, two API processes', { apiProcesses: 2 }],
] as const) {
  const results = await benchHttp({ seconds, connections: 50, rounds, backend: 'postgres', ...o });
  const bare = results[0]!;
  console.log(`| ${label} | bare Fastify | ${bare.requestsPerSec.toLocaleString('en-US')} | ${bare.p99Ms} | 1.00 | ${bare.cpuUsPerRequest} | 1.00 |`);
  for (const r of results.slice(1)) {
    console.log(`| ${label} | ${r.name.replace(/ \(.*$/, '')} | ${r.requestsPerSec.toLocaleString('en-US')} | ${r.p99Ms} | ${ratio(r.requestsPerSec, bare.requestsPerSec)} | ${r.cpuUsPerRequest} | ${ratio(bare.cpuUsPerRequest, r.cpuUsPerRequest)} | non-2xx ${r.non2xx} |`);
  }
}
