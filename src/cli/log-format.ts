// What `sdg worker` and `sdg scheduler` print: pino's JSON lines with --json (for log collectors),
// else one readable line per event: time, level, message, then the fields as key=value.
import type { DestinationStream } from 'pino';
import { visible } from './output.js';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'err']);

function value(v: unknown): string {
  if (typeof v === 'string') return /[\s="]/.test(v) ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/** One pino JSON line as a readable line. */
export function humanLine(json: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const time = typeof o.time === 'number' ? new Date(o.time).toISOString() : '';
  const level = (LEVELS[o.level as number] ?? String(o.level)).padEnd(5);
  const fields = Object.entries(o)
    .filter(([k, v]) => !SKIP.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(' ');
  const err = o.err as { message?: string } | undefined;
  // Escaped: a field may carry a caller's text (a username, a source's error message).
  return `${visible(`${time} ${level} ${String(o.msg ?? '')}${fields ? ` ${fields}` : ''}${err?.message ? ` error=${value(err.message)}` : ''}`)}\n`;
}

export function humanStream(out: NodeJS.WritableStream = process.stdout): DestinationStream {
  return { write: (line: string) => void out.write(humanLine(line)) };
}
