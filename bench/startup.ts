// Start-up as a user meets it: `npm start` on a built tree (the build is skipped when nothing
// changed) until /healthz answers, and the compiled server alone; fastest of `rounds`.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, repoRoot } from '../test/helpers/processes.js';
import { SERVER_FLAGS } from './shipped-flags.js';

async function timeToHealthy(cmd: string, args: string[]): Promise<number> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-bench-start-'));
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(cmd, args, { cwd: repoRoot, env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, stdio: 'ignore', detached: true });
  try {
    for (;;) {
      if (performance.now() - t0 > 30_000) throw new Error(`${cmd} ${args.join(' ')}: no /healthz after 30 s`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return (performance.now() - t0) / 1000;
      } catch {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  } finally {
    process.kill(-child.pid!, 'SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchStartup(rounds = 5): Promise<Record<string, number>> {
  let npmStart = Infinity;
  let server = Infinity;
  for (let r = 0; r < rounds; r++) {
    npmStart = Math.min(npmStart, await timeToHealthy('npm', ['start', '--silent']));
    server = Math.min(server, await timeToHealthy(process.execPath, [...SERVER_FLAGS, 'dist/src/cli/main.js', 'serve']));
  }
  return { 'npm start on a built tree, to /healthz (s)': Math.round(npmStart * 100) / 100, 'the compiled server alone, to /healthz (s)': Math.round(server * 100) / 100 };
}
