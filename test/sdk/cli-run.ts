// Runs sdg-client from its sources, as the CLI tests do, with an optional stdin and a shell prefix
// (a `ulimit` for a file-size limit, say).
import { spawn } from 'node:child_process';
import { repoRoot } from '../helpers/processes.js';

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function cli(args: string[], env: Record<string, string>, o: { stdin?: string; shell?: string } = {}): Promise<Run> {
  const node = [process.execPath, '--import', 'tsx', 'sdk/src/cli/main.ts', ...args];
  const [cmd, ...argv] = o.shell ? ['bash', '-c', `${o.shell}; exec "$0" "$@"`, ...node] : node;
  const child = spawn(cmd!, argv, {
    cwd: repoRoot,
    env: { ...process.env, SDG_API_KEY: '', SDG_BASE_URL: '', ...env },
    stdio: [o.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (o.stdin !== undefined) child.stdin!.end(o.stdin);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export const jsonLines = (text: string) =>
  text
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The words of the command a note printed after `run: sdg-client ` (bare or single-quoted), for running it again. */
export function printedCommand(stderr: string): string[] | undefined {
  const line = /run: sdg-client (.+)$/m.exec(stderr)?.[1];
  if (!line) return undefined;
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1].replaceAll("'\\''", "'") : m[2]!));
}
