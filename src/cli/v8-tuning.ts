import { setFlagsFromString } from 'node:v8';

/**
 * V8's allocation-site pretenuring off, set before the server is built, on either store. Some
 * freshly started servers took, while warming up, a pretenuring decision that stuck: garbage
 * collection then took a quarter of their CPU or more (a full collection 600 times a minute
 * instead of 6), for the life of the process. On Postgres + Redis about half of them
 * (docs/benchmarks.md, 2026-11-27), on the embedded store 2 of 12 (2026-11-29: 36 to 40 µs of CPU a
 * request instead of 19 to 22, p99 over 10 ms). With it off, none of 25 and none of 8. On the
 * embedded store it once cost the benchmark's echo and tweet about 2 µs a request, so it was set on
 * Postgres only; measured again on 2026-11-29, three pairs, no cost resolved. Set at run time rather
 * than on the command line so that every way of starting `sdg serve` has it.
 */
export function tuneV8(setFlags: (flags: string) => void = setFlagsFromString): void {
  setFlags('--no-allocation-site-pretenuring');
}
