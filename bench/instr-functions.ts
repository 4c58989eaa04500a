// Where a kept callgrind window's instructions went, by function, per request: native functions as
// callgrind names them, JIT'd JavaScript through the map V8 wrote (--perf-basic-prof), and V8's
// optimizing compiler (its own thread) as one line. The windows come from bench/instructions.ts with
// INSTR_KEEP set:
//
//   INSTR_KEEP=/tmp/instr INSTR_ENDPOINTS=ascii node --import tsx bench/instructions.ts
//   node --import tsx bench/instr-functions.ts /tmp/instr/cg.dist.ascii.2 [--inclusive] [--top 60]
//
// A function's own instructions by default; --inclusive adds what it called (callgrind's call graph:
// recursion and JIT frames make those figures rough, use them to find callers, not to add up).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

/** Requests in a window (bench/instructions.ts's COUNTED). */
const WINDOW_REQUESTS = 10_000;

interface JitRange {
  start: number;
  end: number;
  name: string;
}

/** The map's ranges, sorted by start; a range written later for the same address wins (code moved or replaced). */
export function readJitMap(text: string): JitRange[] {
  const ranges: JitRange[] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m) ranges.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! });
  }
  return ranges.map((r, i) => ({ ...r, i })).sort((a, b) => a.start - b.start || a.i - b.i);
}

/** The JavaScript function whose code holds `addr` (the latest written, where ranges overlap). */
export function jitName(ranges: JitRange[], addr: number): string | undefined {
  let lo = 0;
  let hi = ranges.length - 1;
  let at = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]!.start <= addr) {
      at = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  // Earlier starts may still cover addr: look back over the few that could (code objects are small).
  for (let i = at; i >= 0 && i > at - 64; i--) if (addr < ranges[i]!.end) return ranges[i]!.name;
  return undefined;
}

/** Per function (named as above), the instructions of callgrind_annotate's listing of `dump`. */
export function byFunction(annotated: string, ranges: JitRange[]): Map<string, number> {
  const out = new Map<string, number>();
  let listing = false;
  for (const line of annotated.split('\n')) {
    if (/file:function/.test(line)) {
      listing = true;
      continue;
    }
    const m = listing ? /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line) : null;
    if (!m) continue;
    const n = Number(m[1]!.replace(/,/g, ''));
    let name = m[2]!.replace(/^\?\?\?:/, '').replace(/'\d+/g, '');
    const addr = /^0x([0-9a-f]+) \[\?\?\?\]$/.exec(name);
    if (addr) name = `JS ${jitName(ranges, parseInt(addr[1]!, 16)) ?? `(unmapped 0x${addr[1]})`}`;
    else if (/v8::internal::compiler::|turboshaft|maglev::/.test(name)) name = "(V8's optimizing compiler)";
    out.set(name, (out.get(name) ?? 0) + n);
  }
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const dump = args.find((a) => !a.startsWith('--') && !/^\d+$/.test(a));
  if (!dump) throw new Error('usage: bench/instr-functions.ts <kept dump> [--inclusive] [--top N]');
  const top = Number(args[args.indexOf('--top') + 1]) || 40;
  const mapFile = dump.replace(/\.\d+$/, '.map');
  const ranges = existsSync(mapFile) ? readJitMap(readFileSync(mapFile, 'utf8')) : [];
  if (!ranges.length) console.error(`no map at ${mapFile}: JIT'd code stays unnamed`);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', ...(args.includes('--inclusive') ? ['--inclusive=yes'] : []), dump], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const fns = byFunction(annotated, ranges);
  const total = Number(/^summary: (\d+)/m.exec(readFileSync(dump, 'utf8'))?.[1]);
  console.log(`${Math.round(total / WINDOW_REQUESTS).toLocaleString('en-US')} instructions a request in all`);
  for (const [name, n] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${Math.round(n / WINDOW_REQUESTS).toString().padStart(8)}  ${name}`);
}
