// Leases on job rows. A job is a row with `status`, `attempts`, `lease_owner` and `lease_expires_at`.
// A worker claims one with a single conditional UPDATE (… WHERE status = ready OR the lease expired),
// so with any number of processes exactly one wins; it renews the lease while it works (heartbeat) and
// finishes with an UPDATE conditioned on still owning it. A worker that dies stops renewing: when the
// lease expires another worker claims the row again (attempts + 1), which is how a restart resumes.
import { setMaxListeners } from 'node:events';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export interface LeaseSpec {
  table: 'exports' | 'watchlist_batches' | 'crawl_targets';
  /** Status of a row waiting for a worker. */
  ready: string;
  /** Status of a row a worker holds. */
  active: string;
  /**
   * Rows with the same value in this column run one at a time, oldest first: a row is ready only
   * when no older row of that value is ready or active (one account's watchlist batches apply in
   * the order they were sent, and one account's many batches leave the other workers to others).
   */
  serialBy?: 'account_id';
}

/** The condition that no older row of the same `serialBy` value is waiting or running (true without serialBy). */
function noneBefore(spec: LeaseSpec) {
  if (!spec.serialBy) return sql`1 = 1`;
  const t = sql.table(spec.table);
  const col = sql.ref(spec.serialBy);
  const outer = sql.ref(`${spec.table}.${spec.serialBy}`);
  return sql`not exists (select 1 from ${t} as earlier
    where earlier.${col} = ${outer} and earlier.status in (${spec.ready}, ${spec.active})
      and (earlier.created_at < ${sql.ref(`${spec.table}.created_at`)} or (earlier.created_at = ${sql.ref(`${spec.table}.created_at`)} and earlier.id < ${sql.ref(`${spec.table}.id`)})))`;
}

export interface Claim {
  id: string;
  /** Including this one. */
  attempts: number;
  owner: string;
}

export class LeaseLostError extends Error {
  constructor(spec: LeaseSpec, id: string) {
    super(`Lost the lease on ${spec.table} ${id}: another worker took it over.`);
    this.name = 'LeaseLostError';
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function affected(r: { numAffectedRows?: bigint }): number {
  return Number(r.numAffectedRows ?? 0n);
}

/** Claims one specific row if it is ready (or its lease expired). */
export async function claimById(db: Kysely<Database>, spec: LeaseSpec, id: string, owner: string, leaseMs: number, nowMs = Date.now()): Promise<Claim | undefined> {
  const t = sql.table(spec.table);
  const now = iso(nowMs);
  const r = await sql`
    update ${t} set status = ${spec.active}, lease_owner = ${owner}, lease_expires_at = ${iso(nowMs + leaseMs)}, attempts = attempts + 1
    where id = ${id} and ((status = ${spec.ready} and ${noneBefore(spec)}) or (status = ${spec.active} and lease_expires_at < ${now}))`.execute(db);
  if (affected(r) !== 1) return undefined;
  const row = await sql<{ attempts: number }>`select attempts from ${t} where id = ${id} and lease_owner = ${owner}`.execute(db);
  const attempts = row.rows[0]?.attempts;
  return attempts === undefined ? undefined : { id, attempts: Number(attempts), owner };
}

/** Claims the oldest claimable row, or returns undefined when there is none. */
export async function claimNext(db: Kysely<Database>, spec: LeaseSpec, owner: string, leaseMs: number, nowMs = Date.now()): Promise<Claim | undefined> {
  const t = sql.table(spec.table);
  const now = iso(nowMs);
  // Two queries, each an index walk in created_at order that stops after 8 rows: one with an OR
  // made SQLite read every ready row and sort them, so a crawl cycle of N targets cost N² reads.
  // Active rows are few (at most the workers' concurrency), so the second reads little.
  const ready = await sql<{ id: string; created_at: string }>`
    select id, created_at from ${t} where status = ${spec.ready} and ${noneBefore(spec)} order by created_at limit 8`.execute(db);
  const expired = await sql<{ id: string; created_at: string }>`
    select id, created_at from ${t} where status = ${spec.active} and lease_expires_at < ${now} order by created_at limit 8`.execute(db);
  const candidates = [...ready.rows, ...expired.rows].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)).slice(0, 8);
  for (const c of candidates) {
    const claim = await claimById(db, spec, c.id, owner, leaseMs, nowMs);
    if (claim) return claim;
  }
  return undefined;
}

/** Extends the lease; false when this owner no longer holds it. */
export async function renewLease(db: Kysely<Database>, spec: LeaseSpec, claim: Claim, leaseMs: number): Promise<boolean> {
  const r = await sql`
    update ${sql.table(spec.table)} set lease_expires_at = ${iso(Date.now() + leaseMs)}
    where id = ${claim.id} and lease_owner = ${claim.owner} and status = ${spec.active}`.execute(db);
  return affected(r) === 1;
}

/**
 * Inside a transaction: takes the row's write lock and proves the lease is still this owner's, so
 * the transaction's other writes land only while it is. Throws LeaseLostError otherwise.
 */
export async function holdLease(trx: Kysely<Database>, spec: LeaseSpec, claim: Claim): Promise<void> {
  const r = await sql`
    update ${sql.table(spec.table)} set attempts = attempts
    where id = ${claim.id} and lease_owner = ${claim.owner} and status = ${spec.active}`.execute(trx);
  if (affected(r) !== 1) throw new LeaseLostError(spec, claim.id);
}

/** Gives the row back untouched (a graceful stop): ready again at once, and the attempt not counted. */
export async function releaseLease(db: Kysely<Database>, spec: LeaseSpec, claim: Claim): Promise<void> {
  await sql`
    update ${sql.table(spec.table)} set status = ${spec.ready}, lease_owner = null, lease_expires_at = null, attempts = attempts - 1
    where id = ${claim.id} and lease_owner = ${claim.owner} and status = ${spec.active}`.execute(db);
}

/**
 * Renews the lease every leaseMs/3 while `fn` runs. The signal given to `fn` aborts when the runner
 * stops (parent) or the lease is lost; `fn` should check it between steps.
 */
export async function withHeartbeat<T>(
  db: Kysely<Database>,
  spec: LeaseSpec,
  claim: Claim,
  leaseMs: number,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  // A crawl's calls to the source (CRAWL_CONCURRENCY at once, up to 256) each listen to it while
  // under way: past 10 Node printed a leak warning there was not.
  setMaxListeners(0, ac.signal);
  const onParent = () => ac.abort(parent.reason);
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  let renewing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    renewing = renewLease(db, spec, claim, leaseMs).then(
      (held) => {
        if (!held) ac.abort(new LeaseLostError(spec, claim.id));
      },
      () => undefined, // a store hiccup: try again at the next beat; the lease has slack for two misses
    );
  }, Math.max(50, Math.floor(leaseMs / 3)));
  try {
    return await fn(ac.signal);
  } finally {
    clearInterval(timer);
    parent.removeEventListener('abort', onParent);
    await renewing;
  }
}

// The job's summary for the runner's log line (runner.ts JobSummary).
type Perform = (claim: Claim, signal: AbortSignal) => Promise<Record<string, string | number | boolean | null | undefined> | void>;

/** A job kind whose rows are claimed through `spec`'s lease, for the runner. */
export function leasedJobKind(
  db: Kysely<Database>,
  spec: LeaseSpec,
  o: { name: string; concurrency: number; leaseMs: number; logLevel?: 'info' | 'debug'; perform: Perform },
) {
  return {
    name: o.name,
    concurrency: o.concurrency,
    logLevel: o.logLevel,
    async claim(owner: string) {
      const c = await claimNext(db, spec, owner, o.leaseMs);
      return c && { id: c.id, attempt: c.attempts, perform: (signal: AbortSignal) => o.perform(c, signal) };
    },
  };
}

/** Tests and tools: claims one row by id and performs it now in this process; false if not claimable. */
export async function runLeasedNow(db: Kysely<Database>, spec: LeaseSpec, id: string, owner: string, leaseMs: number, perform: Perform): Promise<boolean> {
  const c = await claimById(db, spec, id, owner, leaseMs);
  if (!c) return false;
  await perform(c, new AbortController().signal);
  return true;
}
