import type { MeterStore } from './meter-store.js';

// A process that dies holding leases (Postgres) leaves them in the database until they expire. Every
// API process sweeps expired leases back into their accounts' available balances; the sweep deletes
// each lease before crediting it back, so two processes sweeping at once release each lease once.
// SQLite keeps holds in the process: nothing to sweep.
export function startLeaseSweeper(meter: Pick<MeterStore, 'sweep'>, opts: { everyMs: number; onError?: (err: unknown) => void }): { stop(): void } {
  const sweep = meter.sweep?.bind(meter);
  if (!sweep) return { stop: () => undefined };
  const timer = setInterval(() => void sweep().catch((err: unknown) => opts.onError?.(err)), opts.everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
