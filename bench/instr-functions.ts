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
import { pathToFileURL } from 'node:url';
import { COUNTED } from './instructions.js';

export interface JitMap {
  /** Code ranges sorted by start, each with its line's position in the map (`order`: later written, higher). */
  ranges: Array<{ start: number; end: number; name: string; order: number }>;
  /** For each position in `ranges`, the highest end among it and those before it (where a look back can stop). */
  maxEnd: number[];
}

/** The map V8 writes, one line a code object: start and size in hex, then its name. */
export function readJitMap(text: string): JitMap {
  const ranges: JitMap['ranges'] = [];
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line);
    if (m) ranges.push({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]!, order: ranges.length });
  }
  ranges.sort((a, b) => a.start - b.start || a.order - b.order);
  const maxEnd: number[] = [];
  for (const r of ranges) maxEnd.push(Math.max(r.end, maxEnd[maxEnd.length - 1] ?? 0));
  return { ranges, maxEnd };
}

/**
 * The JavaScript function whose code holds `addr`: where code objects overlap (V8 reused the space of
 * code it freed), the one written last, which is what ran at that address when the window was counted.
 */
export function jitName(map: JitMap, addr: number): string | undefined {
  const { ranges, maxEnd } = map;
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
  let best: JitMap['ranges'][number] | undefined;
  for (let i = at; i >= 0 && maxEnd[i]! > addr; i--) {
    const r = ranges[i]!;
    if (addr < r.end && (!best || r.order > best.order)) best = r;
  }
  return best?.name;
}

/** Per function (named as above), the instructions of callgrind_annotate's function listing. */
export function byFunction(annotated: string, map: JitMap): Map<string, number> {
  const out = new Map<string, number>();
  let listing = false;
  for (const line of annotated.split('\n')) {
    if (/file:function/.test(line)) {
      listing = true;
      continue;
    }
    if (!listing || /^-+$/.test(line)) continue;
    // The listing ends at its first blank line after entries (annotated sources may follow).
    if (line.trim() === '' && out.size > 0) break;
    const m = /^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.*)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1]!.replace(/,/g, ''));
    let name = m[2]!.replace(/^\?\?\?:/, '').replace(/'\d+/g, '');
    const addr = /^0x([0-9a-f]+) \[\?\?\?\]$/.exec(name);
    if (addr) name = jitName(map, parseInt(addr[1]!, 16)) ?? `JIT code (unmapped 0x${addr[1]})`;
    else if (/v8::internal::compiler::|turboshaft|maglev::/.test(name)) name = "(V8's optimizing compiler)";
    out.set(name, (out.get(name) ?? 0) + n);
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf('--top');
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 40;
  const dump = args.find((a, i) => !a.startsWith('--') && i !== topAt + 1);
  if (!dump) throw new Error('usage: bench/instr-functions.ts <kept dump> [--inclusive] [--top N]');
  const mapFile = dump.replace(/\.\d+$/, '.map');
  const map = readJitMap(existsSync(mapFile) ? readFileSync(mapFile, 'utf8') : '');
  if (!map.ranges.length) console.error(`no map at ${mapFile}: JIT'd code stays unnamed`);
  const annotated = execFileSync('callgrind_annotate', ['--threshold=100', ...(args.includes('--inclusive') ? ['--inclusive=yes'] : []), dump], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const fns = byFunction(annotated, map);
  const total = Number(/^summary: (\d+)/m.exec(readFileSync(dump, 'utf8'))?.[1]);
  console.log(`${Math.round(total / COUNTED).toLocaleString('en-US')} instructions a request in all`);
  for (const [name, n] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${Math.round(n / COUNTED).toString().padStart(8)}  ${name}`);
}
