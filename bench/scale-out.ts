// Only the scale-out part of `npm run bench`: the HTTP calls on Postgres + Redis in each of
// SCALE_OUT_SETUPS (BENCH_SECONDS, BENCH_ROUNDS; BENCH_DATABASE_URL, BENCH_REDIS_URL).
// Prints the rows of docs/benchmarks.md's Postgres table. Build first: `node scripts/build.mjs`.
import { benchHttp, meterCells, SCALE_OUT_SETUPS } from './http.js';

const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const ratio = (x: number, y: number) => (x / y).toFixed(2);
// SCALE_OUT_ONLY: the setups' positions to run (0-based, comma-separated), e.g. 0,3.
const only = process.env.SCALE_OUT_ONLY?.split(',').map(Number);
for (const [label, o] of SCALE_OUT_SETUPS.filter((_, i) => !only || only.includes(i))) {
  const results = await benchHttp({ seconds, connections: 50, rounds, backend: 'postgres', ...o });
  const bare = results[0]!;
  for (const r of results) {
    const h = r.host;
    console.log(`| ${label} | ${r.name.replace(/ \(.*$/, '')} | ${r.requestsPerSec.toLocaleString('en-US')} | ${r.p99Ms} | ${ratio(r.requestsPerSec, bare.requestsPerSec)} | ${r.cpuUsPerRequest} | ${ratio(bare.cpuUsPerRequest, r.cpuUsPerRequest)} | ${h.postgres} | ${h.redis} | ${h.busy} | ${h.idlePct} | ${meterCells(r)} | non-2xx ${r.non2xx} |`);
  }
}
