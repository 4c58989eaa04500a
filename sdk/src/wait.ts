// Waiting on the gateway's background jobs (watchlist batches, exports) by polling their records.
import type { SdgClient, CallOptions } from './client.js';
import { ExportError, WaitTimeoutError } from './errors.js';
import type { Result } from './result.js';
import { sleep } from './transport.js';
import type { Batch, BatchItem, ExportRecord, WatchlistAddItem } from './types.js';

export interface WaitOptions<T> extends CallOptions {
  /** Called with every state read, the first one included. */
  onProgress?: ((state: T) => void) | undefined;
  /** Between polls (default 1000 ms). */
  intervalMs?: number | undefined;
  /** Give up after this long (default 10 minutes): WaitTimeoutError. */
  timeoutMs?: number | undefined;
}

async function poll<T>(what: string, job: { exportId?: string; batchId?: string }, read: () => Promise<Result<T>>, done: (t: T) => boolean, o: WaitOptions<T>): Promise<T> {
  const deadline = Date.now() + (o.timeoutMs ?? 600_000);
  for (;;) {
    const { data } = await read();
    o.onProgress?.(data);
    if (done(data)) return data;
    if (Date.now() >= deadline) throw new WaitTimeoutError(`${what} did not finish within ${o.timeoutMs ?? 600_000} ms.`, job);
    await sleep(o.intervalMs ?? 1000, o.signal);
  }
}

export function waitForBatch(client: SdgClient, batchId: string, o: WaitOptions<Batch>): Promise<Batch> {
  return poll(`Batch ${batchId}`, { batchId }, () => client.batch(batchId, o), (b) => b.status === 'completed' || b.status === 'failed', o);
}

export async function waitForExport(client: SdgClient, id: string, o: WaitOptions<ExportRecord>): Promise<ExportRecord> {
  const rec = await poll(`Export ${id}`, { exportId: id }, () => client.getExport(id, o), (e) => e.status === 'completed' || e.status === 'failed', o);
  if (rec.status === 'failed') throw new ExportError(`Export ${id} failed: ${rec.error ?? 'no reason given'}.`, id);
  return rec;
}

export interface AddAllOptions extends CallOptions {
  /** Items per batch (default and maximum 100). */
  batchSize?: number | undefined;
  /** After each batch completes: how many items are done of how many. */
  onProgress?: ((p: { done: number; total: number; batch: Batch }) => void) | undefined;
  /** Between polls of each batch (default 1000 ms). */
  intervalMs?: number | undefined;
  /** Give up waiting for a batch after this long (default 10 minutes): WaitTimeoutError. */
  timeoutMs?: number | undefined;
}

export interface AddAllResult {
  batches: Batch[];
  /** Every item's outcome, in the order given. */
  items: BatchItem[];
  /** How many items ended in each status (added, already_present, not_found, limit_exceeded…). */
  counts: Record<string, number>;
}

export async function addAllToWatchlist(client: SdgClient, items: WatchlistAddItem[], o: AddAllOptions): Promise<AddAllResult> {
  const size = Math.min(100, Math.max(1, o.batchSize ?? 100));
  const result: AddAllResult = { batches: [], items: [], counts: {} };
  for (let i = 0; i < items.length; i += size) {
    const chunk = items.slice(i, i + size);
    const { data: queued } = await client.addToWatchlist(chunk, { signal: o.signal });
    const batch = await waitForBatch(client, queued.batchId, { signal: o.signal, intervalMs: o.intervalMs ?? 250, timeoutMs: o.timeoutMs });
    result.batches.push(batch);
    for (const item of batch.items) {
      result.items.push(item);
      result.counts[item.status] = (result.counts[item.status] ?? 0) + 1;
    }
    o.onProgress?.({ done: Math.min(items.length, i + size), total: items.length, batch });
  }
  return result;
}
