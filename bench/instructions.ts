// Instructions a request costs the server, counted by valgrind's callgrind: the same build, requests
// and inputs give about the same count (windows of one server within a few percent, the lowest of
// three kept) whatever else the host is doing, where CPU time on this shared 2-core host moves by a
// third from one minute to the next and bench/ab.ts's pairs resolve only differences of 5 to 10%. A count is not a time (the kernel's part of a request is not
// in it, and an instruction of one kind costs more than another), so the targets stay those of
// `npm run bench`; this is the instrument for the changes too small for it (docs/benchmarks.md,
// "Instructions a request").
//
//   node --import tsx bench/instructions.ts [build...]      # default: dist; e.g. dist-A dist
//
// INSTR_ENDPOINTS: which of bare, echo, ascii, wide (default: all four; bare is Fastify's hello).
// INSTR_BACKEND=postgres: the gateway on Postgres + Redis (BENCH_DATABASE_URL, BENCH_REDIS_URL as in
// bench/http.ts, a fresh schema each); only the server's instructions are counted, not the stores'.
// INSTR_KEEP=dir: each server's dumps are kept there (cg.<build>.<endpoint>.<window>), with the map
// of its compiled JavaScript (the server runs with --perf-basic-prof, cg.<build>.<endpoint>.map), for
// bench/instr-functions.ts to say which functions, native or JavaScript, the instructions went to.
// INSTR_NODE_FLAGS="--flag ...": Node flags given to every server after the shipped ones (to try a
// flag before shipping it: what a flag saves must then be shipped, package.json's start script).
// Each server runs under `valgrind --tool=callgrind --instr-atstart=no`: uninstrumented while 20,000
// requests warm it (its JIT, caches), then instrumented for 2,000 more (valgrind translating the code
// again), then three windows of 10,000 requests counted (50 keep-alive connections, each request sent
// when the last one's answer is in), the lower kept (see count). Under valgrind the server is some 50 times slower, so
// each turn of its event loop finds more requests waiting than at full speed (a group commit takes
// about 45 charges, not 25): costs paid once a turn weigh less here.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot } from '../test/helpers/processes.js';
import { benchKeys, benchStore, benchTweets, fillTweet, serverEnv } from './http.js';
import { SERVER_FLAGS } from './shipped-flags.js';

export type InstrEndpoint = 'bare' | 'echo' | 'ascii' | 'wide';

const WARM = 20_000;
const SETTLE = 2_000;
/** Requests in a counted window (bench/instr-functions.ts divides a kept dump by it). */
export const COUNTED = 10_000;
const WINDOWS = 3;
const CONNECTIONS = 50;

/** Exactly `n` GET requests over `connections` keep-alive connections; throws on any non-2xx. */
export async function requests(url: string, headers: Record<string, string>, n: number, connections = CONNECTIONS): Promise<void> {
  const u = new URL(url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  let sent = 0;
  let done = 0;
  try {
    await new Promise<void>((resolve, reject) => {
      const one = (): void => {
        if (sent >= n) return;
        sent++;
        const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, agent, headers }, (res) => {
          if (res.statusCode! < 200 || res.statusCode! >= 300) reject(new Error(`${url}: ${res.statusCode}`));
          res.resume();
          res.on('end', () => {
            if (++done === n) resolve();
            else one();
          });
        });
        req.on('error', reject);
        req.end();
      };
      for (let i = 0; i < Math.min(connections, n); i++) one();
    });
  } finally {
    agent.destroy();
  }
}

// callgrind_control reaches the server through files in /tmp named after the user and host, as each
// side reads them from its environment: the same for both (HOST is also the address the gateway
// listens on, its default), whatever this process was started with.
const VGDB_ENV = { LOGNAME: 'sdg-bench', USER: 'sdg-bench', HOST: '127.0.0.1' };
/** The `n`th dump's file and instructions: written by the server's process when it next runs valgrind's scheduler, so waited for. */
async function dumped(dir: string, n: number): Promise<{ file: string; total: number }> {
  for (let i = 0; i < 300; i++) {
    const dump = readdirSync(dir).find((f) => new RegExp(`^cg\\.\\d+\\.${n}$`).test(f));
    const total = dump ? Number(/^summary: (\d+)/m.exec(readFileSync(join(dir, dump), 'utf8'))?.[1]) : NaN;
    if (dump && Number.isFinite(total)) return { file: join(dir, dump), total };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no dump ${n} with a summary line in ${dir}`);
}

const callgrind = (args: string[]): void => void execFileSync('callgrind_control', args, { stdio: 'ignore', env: { ...process.env, ...VGDB_ENV } });

async function waitFor(url: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; i < 1_200; i++) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited: ${output()}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`server did not answer ${url}: ${output()}`);
}

/** Instructions a request of `url` costs the process `args` starts (under callgrind), on `port`. */
async function count(args: string[], env: Record<string, string>, port: number, url: string, headers: Record<string, string>, ready: string, fill?: () => Promise<void>, keepAs?: string): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-instr-'));
  // Kept dumps name JIT'd code by address only: V8 writes /tmp/perf-<pid>.map, which names it.
  // After the shipped flags (the later of two settings of a flag wins), before the script.
  const extra = [...(keepAs ? ['--perf-basic-prof'] : []), ...(process.env.INSTR_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)];
  const script = args.findIndex((a) => !a.startsWith('-'));
  const nodeArgs = [...args.slice(0, script), ...extra, ...args.slice(script)];
  const child = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dir, 'cg.%p')}`, process.execPath, ...nodeArgs], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port), ...VGDB_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  try {
    await waitFor(ready, child, () => out);
    await fill?.();
    // The pid callgrind runs as (Debian's valgrind is a script that starts it): its output file's name.
    const started = readdirSync(dir).map((f) => /^cg\.(\d+)$/.exec(f)?.[1]).find(Boolean);
    if (!started) throw new Error(`callgrind left no output file in ${dir}`);
    const pid = started;
    await requests(url, headers, WARM);
    callgrind(['-i', 'on', pid]);
    await requests(url, headers, SETTLE);
    // Windows of the same server differ by up to a few percent (bare Fastify's first by a quarter):
    // work that comes and goes, such as V8's optimizing compiler on its own thread or a collection of
    // the old generation, only ever adds instructions, so the lowest window is the request's own cost.
    const totals: number[] = [];
    for (let w = 1; w <= WINDOWS; w++) {
      callgrind(['-z', pid]);
      await requests(url, headers, COUNTED);
      callgrind(['-d', pid]);
      const dump = await dumped(dir, w);
      totals.push(dump.total);
      if (keepAs) copyFileSync(dump.file, `${keepAs}.${w}`);
    }
    if (keepAs) {
      // V8 writes it there whatever TMPDIR says.
      const map = `/tmp/perf-${pid}.map`;
      if (existsSync(map)) {
        copyFileSync(map, `${keepAs}.map`);
        rmSync(map, { force: true });
      } else console.error(`  no ${map}: the kept dumps' JavaScript stays unnamed`);
    }
    const total = Math.min(...totals);
    console.error(`  windows: ${totals.map((t) => Math.round(t / COUNTED)).join(', ')} instructions a request`);
    return total / COUNTED;
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface InstrRow {
  build: string;
  endpoint: InstrEndpoint;
  instructionsPerRequest: number;
}

export async function benchInstructions(builds: string[], endpoints: InstrEndpoint[], backend: 'embedded' | 'postgres' = 'embedded'): Promise<InstrRow[]> {
  const rows: InstrRow[] = [];
  for (const build of builds) {
    for (const endpoint of endpoints) {
      const port = await freePort();
      const keep = process.env.INSTR_KEEP;
      if (keep) mkdirSync(keep, { recursive: true });
      const keepAs = keep ? join(keep, `cg.${build.replace(/\W+/g, '_')}.${endpoint}`) : undefined;
      const base = `http://127.0.0.1:${port}`;
      let n: number;
      if (endpoint === 'bare') {
        n = await count([...SERVER_FLAGS, `${build}/bench/bare-server.js`], {}, port, `${base}/hello`, {}, `${base}/hello`, undefined, keepAs);
      } else {
        // A store of its own for each server: its key, and the tweets of the demo network now.
        const store = await benchStore(backend);
        try {
          const env = serverEnv(store.env);
          const [key] = await benchKeys(env, 1);
          const tweets = await benchTweets(env);
          const headers = { 'x-api-key': key! };
          const path = endpoint === 'echo' ? '/echo/v1/hello' : tweets[endpoint];
          const fill = async (): Promise<void> => {
            for (const kind of ['ascii', 'wide'] as const) await fillTweet(`${base}${tweets[kind]}`, key!, kind);
          };
          n = await count([...SERVER_FLAGS, `${build}/src/cli/main.js`, 'serve'], env, port, `${base}${path}`, headers, `${base}/healthz`, fill, keepAs);
        } finally {
          await store.dispose();
        }
      }
      rows.push({ build, endpoint, instructionsPerRequest: Math.round(n) });
      console.error(`${build} ${endpoint}: ${Math.round(n)} instructions a request`);
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const builds = process.argv.slice(2);
  const endpoints = (process.env.INSTR_ENDPOINTS ?? 'bare,echo,ascii,wide').split(',') as InstrEndpoint[];
  for (const e of endpoints) if (!['bare', 'echo', 'ascii', 'wide'].includes(e)) throw new Error(`INSTR_ENDPOINTS: unknown ${e}`);
  const rows = await benchInstructions(builds.length ? builds : ['dist'], endpoints, process.env.INSTR_BACKEND === 'postgres' ? 'postgres' : 'embedded');
  const bare = new Map(rows.filter((r) => r.endpoint === 'bare').map((r) => [r.build, r.instructionsPerRequest]));
  console.log('| build | endpoint | instructions a request | ratio (bare/ours) |');
  console.log('|---|---|---|---|');
  for (const r of rows) {
    const b = bare.get(r.build);
    console.log(`| ${r.build} | ${r.endpoint} | ${r.instructionsPerRequest.toLocaleString('en-US')} | ${b ? (b / r.instructionsPerRequest).toFixed(2) : '–'} |`);
  }
}
