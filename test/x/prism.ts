// Starts Prism (a mock server generated from the X API v2 OpenAPI document) on loopback for a test file.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { repoRoot } from './helpers.js';

/** The official document, kept in the repository (docs/upstream/README.md says where it comes from). */
export const SPEC_PATH = path.resolve(repoRoot, 'docs/upstream/x-api-v2-openapi.json');
const PRISM_BIN = path.resolve(repoRoot, 'node_modules/.bin/prism');

export interface RunningPrism {
  baseUrl: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Spawns `prism mock` and polls until it answers (up to `timeoutMs`). */
export async function startPrism(timeoutMs = 60_000): Promise<RunningPrism> {
  const port = await freePort();
  const child = spawn(PRISM_BIN, ['mock', SPEC_PATH, '-h', '127.0.0.1', '-p', String(port), '--errors', 'false'], {
    env: { ...process.env, SCARF_ANALYTICS: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`Prism exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(`${baseUrl}/2/users/12`, { headers: { authorization: 'Bearer probe' }, signal: AbortSignal.timeout(2_000) });
      return { baseUrl, stop: () => stopChild(child) };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  await stopChild(child);
  throw new Error(`Prism did not listen within ${timeoutMs} ms:\n${output}`);
}
