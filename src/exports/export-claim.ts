// Which export a free worker takes next: fair across accounts. One account's hundreds of queued
// exports must not delay another's, so the claim serves accounts in turns: among the accounts with
// queued exports, the one whose last turn is oldest (never served first), and of that account its
// oldest export. Turns are a counter in export_turns, not a clock, so the order holds however fast
// exports finish. An export whose worker died (lease expired) is resumed before any new one.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { claimById, type Claim } from '../jobs/lease.js';
import { exportLease } from './export-repo.js';

const CANDIDATES = 8;

export async function claimNextExport(db: Kysely<Database>, owner: string, leaseMs: number, nowMs = Date.now()): Promise<Claim | undefined> {
  const now = new Date(nowMs).toISOString();
  const expired = await sql<{ id: string }>`
    select id from exports where status = 'running' and lease_expires_at < ${now} order by created_at limit ${CANDIDATES}`.execute(db);
  for (const r of expired.rows) {
    const c = await claimById(db, exportLease, r.id, owner, leaseMs, nowMs);
    if (c) return c;
  }
  const accounts = await sql<{ account_id: string }>`
    select q.account_id, min(q.created_at) as oldest, coalesce(max(t.turn), 0) as last_turn
    from exports q left join export_turns t on t.account_id = q.account_id
    where q.status = 'queued'
    group by q.account_id
    order by last_turn, oldest
    limit ${CANDIDATES}`.execute(db);
  for (const a of accounts.rows) {
    const next = await sql<{ id: string }>`
      select id from exports where status = 'queued' and account_id = ${a.account_id} order by created_at, id limit 1`.execute(db);
    const id = next.rows[0]?.id;
    if (id === undefined) continue;
    const c = await claimById(db, exportLease, id, owner, leaseMs, nowMs);
    if (!c) continue;
    await takeTurn(db, a.account_id);
    return c;
  }
  return undefined;
}

/** Records that the account was just served: its turn becomes the newest. */
async function takeTurn(db: Kysely<Database>, accountId: string): Promise<void> {
  // Two workers taking turns at once may get the same number: a tie, broken by the oldest export.
  await sql`
    insert into export_turns (account_id, turn)
    values (${accountId}, (select coalesce(max(turn), 0) + 1 from export_turns))
    on conflict (account_id) do update set turn = excluded.turn`.execute(db);
}
