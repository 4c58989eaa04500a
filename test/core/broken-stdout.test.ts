// A server whose standard output is a pipe nobody reads any more (a log shipper that died, `sdg
// scheduler --json | head`) still stops on SIGTERM. pino's asynchronous writer flushed at exit in a
// loop that retried EPIPE every 100 ms forever: the process stopped listening and never exited, and
// only SIGKILL ended it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { test } from 'node:test';
import { freePort, repoRoot, until } from '../helpers/processes.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const tmp = tempDirs('sdg-epipe-');

for (const args of [['serve'], ['scheduler', '--json']]) {
  test(`sdg ${args.join(' ')} exits on SIGTERM after its stdout's reader went away`, { timeout: 90_000 }, async () => {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATA_DIR: tmp(), PORT: String(port), METRICS_PORT: String(port), LOG_LEVEL: 'info', DATABASE_URL: '', REDIS_URL: '' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      await until('listening', 30_000, async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok);
      assert.match(out, /"level":30/);
      // The reader goes: every write after this meets EPIPE.
      child.stdout.destroy();
      child.kill('SIGTERM');
      const exited = once(child, 'exit');
      const timer = new Promise((r) => setTimeout(r, 30_000, 'still running'));
      const r = await Promise.race([exited, timer]);
      assert.notEqual(r, 'still running', 'the process did not exit within 30 s of SIGTERM');
      assert.deepEqual(r, [0, null]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
}
