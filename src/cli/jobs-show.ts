// `sdg jobs show ID`: one background job's record, whatever its kind, found by its id: a watchlist
// batch (wlb_…), an export (numeric), a crawl cycle (cyc_…) or one account of a cycle (cyc_…:USER_ID).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

// Field names in camelCase, as `sdg jobs list --json` and the HTTP API give them, not the store's columns.
export type JobRecord = { kind: 'watchlist_batch' | 'export' | 'crawl_cycle' | 'crawl_target' } & Record<string, unknown>;

export async function findJob(db: Kysely<Database>, id: string): Promise<JobRecord | undefined> {
  const found = await findRecord(db, id);
  return found && (camelKeys(found) as JobRecord);
}

function camelKeys(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).map(([k, v]) => [k.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), v]));
}

async function findRecord(db: Kysely<Database>, id: string): Promise<JobRecord | undefined> {
  const batch = await db.selectFrom('watchlist_batches').selectAll().where('id', '=', id).executeTakeFirst();
  if (batch) {
    const items = await db.selectFrom('watchlist_batch_items').select(['status']).where('batch_id', '=', id).execute();
    const byStatus: Record<string, number> = {};
    for (const i of items) byStatus[i.status] = (byStatus[i.status] ?? 0) + 1;
    return { kind: 'watchlist_batch', ...batch, items: byStatus };
  }
  const exp = await db.selectFrom('exports').selectAll().where('id', '=', id).executeTakeFirst();
  if (exp) return { kind: 'export', ...exp };
  const cycle = await db.selectFrom('crawl_cycles').selectAll().where('id', '=', id).executeTakeFirst();
  if (cycle) {
    const open = await db.selectFrom('crawl_targets').select((eb) => eb.fn.countAll<number>().as('n')).where('cycle_id', '=', id).where('status', 'in', ['pending', 'running']).executeTakeFirstOrThrow();
    return { kind: 'crawl_cycle', ...cycle, accounts_open: Number(open.n) };
  }
  const target = await db.selectFrom('crawl_targets').selectAll().where('id', '=', id).executeTakeFirst();
  if (target) return { kind: 'crawl_target', ...target };
  return undefined;
}
