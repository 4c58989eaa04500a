// Starts real `sdg serve` processes for multi-process tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const repoRoot = resolve(import.meta.dirname, '../..');

export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

/** Whether the child has ended: it exited, or a signal killed it (then exitCode stays null and no second exit event comes). */
export function ended(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Sends `signal` and resolves with the exit code once the child has ended (at once if it already had). */
export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((res) => {
    if (ended(child)) return res(child.exitCode);
    child.once('exit', (code) => res(code));
    child.kill(signal);
  });
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** `entry`: the program and its arguments (default: the TypeScript sources through tsx). */
export async function startServer(env: Record<string, string>, timeoutMs = 30_000, entry = ['--import', 'tsx', 'src/cli/main.ts', 'serve']): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, entry, {
    cwd: repoRoot,
    // METRICS_PORT: where a process without the API role serves /healthz (an API process ignores it).
    env: { ...process.env, LOG_LEVEL: 'warn', HOST: '127.0.0.1', PORT: String(port), METRICS_PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (ended(child)) throw new Error(`server exited early (${child.exitCode ?? child.signalCode}): ${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`server did not start in ${timeoutMs} ms: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    output: () => out,
    stop: (signal = 'SIGTERM') => stopChild(child, signal),
  };
}

/** Runs the `sdg` command line and returns its stdout; throws on a non-zero exit. */
export async function runSdg(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const code = await new Promise<number | null>((res) => child.on('close', res));
  return { code, stdout, stderr };
}

/** Polls `fn` every `everyMs` until it gives a truthy value, which it returns; throws after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, fn: () => T | undefined | false | Promise<T | undefined | false>, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
