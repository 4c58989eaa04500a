import type { Store } from '../db/connect.js';
import type { MeterStore } from './meter-store.js';
import { releaseStaleReservations } from './credits-repo.js';

// A process that dies between reserve and settle leaves its hold behind, and the account's available
// balance stays short by it. Every API process sweeps holds older than any request can live
// (source timeouts and retries end well within a few minutes); release deletes the hold first, so
// two processes sweeping at once still release each hold once.
export function startReservationSweeper(
  deps: { store: Store; meter: MeterStore },
  opts: { everyMs?: number; olderThanMs?: number; onError?: (err: unknown) => void } = {},
): { stop(): void; sweep(): Promise<number> } {
  const olderThanMs = opts.olderThanMs ?? 15 * 60_000;
  const sweep = () => releaseStaleReservations(deps.store.db, deps.meter, new Date(Date.now() - olderThanMs));
  const timer = setInterval(() => void sweep().catch((err) => opts.onError?.(err)), opts.everyMs ?? 60_000);
  timer.unref();
  return { stop: () => clearInterval(timer), sweep };
}
