// The scale-out topology without Docker: the same roles as deploy/compose.yaml, as separate processes
// on this host, sharing one Postgres, one Redis and one S3-compatible store:
//   - a local S3 (deploy/local-s3.mjs: s3rver behind a signature-enforcing front), unless S3_BUCKET is set;
//   - `sdg migrate` once, then N API processes (`sdg serve` with ROLES=api), M workers (`sdg worker`)
//     and one scheduler (`sdg scheduler`);
//   - a small round-robin reverse proxy in front of the API processes: one address for clients, as
//     Caddy is in the compose file (the API processes trust one proxy hop for client addresses).
// The topology tests (test/topology/) start it through startTopology(). From a shell:
//   DATABASE_URL=postgres://… REDIS_URL=redis://… node --import tsx deploy/topology.ts
// (API_PROCESSES, JOB_WORKERS and PORT, the proxy's port, default 2, 1 and 8080); Ctrl-C stops everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startLocalS3, type LocalS3 } from './local-s3.js';

const repoRoot = resolve(import.meta.dirname, '..');
const SDG = ['--import', 'tsx', 'src/cli/main.ts'];

export interface RoleProcess {
  name: string;
  child: ChildProcess;
  /** The API processes' address; the worker's and scheduler's METRICS_PORT (/healthz, /readyz, /metrics). */
  url?: string;
  /** The process's stdout and stderr so far (the last 64 KB). */
  output(): string;
  /** Sends the signal and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface TopologyOptions {
  databaseUrl: string;
  redisUrl: string;
  apiProcesses?: number;
  workers?: number;
  scheduler?: boolean;
  /** The proxy's port (0: any free port); false: no proxy. */
  proxyPort?: number | false;
  /** Added to every process's environment (after the shared settings). */
  env?: Record<string, string>;
  /** Added to the workers' environment only. */
  workerEnv?: Record<string, string>;
  /** Log level of the processes (default warn). */
  logLevel?: string;
}

export interface Topology {
  apis: RoleProcess[];
  workers: RoleProcess[];
  scheduler: RoleProcess | undefined;
  /** The one address in front of the API processes. */
  proxyUrl: string | undefined;
  /** The local S3, when this topology started one. */
  s3: LocalS3 | undefined;
  /** The environment every process shares (store, Redis, S3). */
  env: Record<string, string>;
  /** Starts one more worker (e.g. after one was killed). */
  startWorker(extraEnv?: Record<string, string>): Promise<RoleProcess>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createNetServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

function spawnRole(name: string, args: string[], env: Record<string, string>): RoleProcess {
  // Each API process here is one process: a WORKERS (sdg serve's cluster size) from the shell is not passed on.
  const { WORKERS: _clusterSize, ...inherited } = process.env;
  const child = spawn(process.execPath, [...SDG, ...args], { cwd: repoRoot, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 65_536) out = out.slice(-65_536);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  return {
    name,
    child,
    output: () => out,
    kill: (signal = 'SIGTERM') =>
      new Promise((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res(child.exitCode);
        child.once('exit', (code) => res(code));
        child.kill(signal);
      }),
  };
}

async function waitHealthy(p: RoleProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (p.child.exitCode !== null) throw new Error(`${p.name} exited early (${p.child.exitCode}): ${p.output()}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      p.child.kill('SIGKILL');
      throw new Error(`${p.name} did not answer /healthz within ${timeoutMs} ms: ${p.output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function run(args: string[], env: Record<string, string>): Promise<void> {
  const p = spawnRole(args.join(' '), args, env);
  const code = await new Promise<number | null>((r) => p.child.once('close', r));
  if (code !== 0) throw new Error(`sdg ${args.join(' ')} exited with ${code}: ${p.output()}`);
}

/** Round-robin over `targets`; a target that refuses the connection is skipped for this request. */
function roundRobinProxy(targets: string[]): Server {
  let next = 0;
  return createServer((req, res) => {
    const tryTarget = (left: number) => {
      const target = new URL(targets[next++ % targets.length]!);
      const forwardedFor = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
      const up = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, 'x-forwarded-for': forwardedFor } },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', (err) => {
        if (left > 1 && !res.headersSent && (err as NodeJS.ErrnoException).code === 'ECONNREFUSED') return tryTarget(left - 1);
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":{"code":"upstream_unavailable","message":"No API process answered."}}');
      });
      req.pipe(up);
    };
    tryTarget(targets.length);
  });
}

/** What every process of the topology shares: the store, Redis, the object store (as compose.yaml's gateways). */
export function sharedEnv(o: Pick<TopologyOptions, 'databaseUrl' | 'redisUrl' | 'logLevel' | 'env'>, s3Env: Record<string, string>): Record<string, string> {
  return { DATABASE_URL: o.databaseUrl, REDIS_URL: o.redisUrl, LOG_LEVEL: o.logLevel ?? 'warn', HOST: '127.0.0.1', ...s3Env, ...o.env };
}

export async function startTopology(o: TopologyOptions): Promise<Topology> {
  const started: RoleProcess[] = [];
  let s3: LocalS3 | undefined;
  let proxy: Server | undefined;
  const stop = async () => {
    if (proxy) {
      proxy.closeAllConnections();
      await new Promise((r) => proxy!.close(r));
    }
    await Promise.all(started.map((p) => p.kill('SIGTERM')));
    await s3?.close();
  };
  try {
    const s3Env: Record<string, string> = {};
    if (!process.env.S3_BUCKET && !o.env?.S3_BUCKET) {
      s3 = await startLocalS3();
      Object.assign(s3Env, s3.env);
    }
    const env = sharedEnv(o, s3Env);
    await run(['migrate'], env);

    const apis = await Promise.all(
      Array.from({ length: o.apiProcesses ?? 2 }, async (_, i) => {
        const port = await freePort();
        const p = spawnRole(`api-${i + 1}`, ['serve'], { ...env, ROLES: 'api', PORT: String(port), TRUST_PROXY: env.TRUST_PROXY ?? '1' });
        started.push(p);
        p.url = `http://127.0.0.1:${port}`;
        await waitHealthy(p, p.url, 60_000);
        return p;
      }),
    );
    // The worker and the scheduler serve only /healthz, /readyz and /metrics, on METRICS_PORT (as in
    // compose.yaml): started once /healthz answers; `url` is where their metrics are.
    const startBackgroundRole = async (name: string, role: 'worker' | 'scheduler', roleEnv: Record<string, string>) => {
      const port = await freePort();
      const p = spawnRole(name, [role], { ...roleEnv, METRICS_PORT: String(port) });
      started.push(p);
      p.url = `http://127.0.0.1:${port}`;
      await waitHealthy(p, p.url, 60_000);
      return p;
    };
    let workerCount = 0;
    const startWorker = (extra: Record<string, string> = {}) => startBackgroundRole(`worker-${++workerCount}`, 'worker', { ...env, ...o.workerEnv, ...extra });
    const workers: RoleProcess[] = [];
    for (let i = 0; i < (o.workers ?? 1); i++) workers.push(await startWorker());
    let scheduler: RoleProcess | undefined;
    if (o.scheduler !== false) scheduler = await startBackgroundRole('scheduler', 'scheduler', env);
    let proxyUrl: string | undefined;
    if (o.proxyPort !== false) {
      proxy = roundRobinProxy(apis.map((a) => a.url!));
      const port = o.proxyPort ?? 0;
      await new Promise<void>((r) => proxy!.listen(port, '127.0.0.1', () => r()));
      proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    }
    return { apis, workers, scheduler, proxyUrl, s3, env, startWorker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { DATABASE_URL, REDIS_URL } = process.env;
  if (!DATABASE_URL || !REDIS_URL) {
    console.error('Set DATABASE_URL (postgres://…) and REDIS_URL (redis://…): the processes share them.');
    process.exit(2);
  }
  const t = await startTopology({
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    apiProcesses: Number(process.env.API_PROCESSES ?? 2),
    workers: Number(process.env.JOB_WORKERS ?? 1),
    proxyPort: Number(process.env.PORT ?? 8080),
    logLevel: process.env.LOG_LEVEL ?? 'info',
  });
  console.log(`clients: ${t.proxyUrl}`);
  for (const a of t.apis) console.log(`${a.name}: ${a.url} (pid ${a.child.pid})`);
  for (const w of [...t.workers, ...(t.scheduler ? [t.scheduler] : [])]) console.log(`${w.name}: ${w.url}/metrics (pid ${w.child.pid})`);
  if (t.s3) console.log(`local S3: ${t.s3.endpoint}, bucket ${t.s3.bucket} (credentials S3RVER / S3RVER)`);
  const shutdown = () => void t.stop().then(() => process.exit(0));
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
