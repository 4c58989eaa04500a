import { setFlagsFromString } from 'node:v8';
import type { Config } from '../config/config.js';

/**
 * On Postgres, V8's allocation-site pretenuring off, set before the server is built. About half of
 * freshly started servers serving charged reads on Postgres + Redis took, while warming up, a
 * pretenuring decision that stuck: garbage collection then took about a quarter of their CPU instead
 * of a twentieth, for the life of the process (docs/benchmarks.md, 2026-11-27). On the embedded
 * store the same flag made the benchmark's echo and tweet cost about 2 µs more a request, so it
 * stays on there. Set at run time rather than on the command line because it depends on the store.
 */
export function tuneV8ForStore(config: Pick<Config, 'databaseUrl'>, setFlags: (flags: string) => void = setFlagsFromString): void {
  if (config.databaseUrl) setFlags('--no-allocation-site-pretenuring');
}
