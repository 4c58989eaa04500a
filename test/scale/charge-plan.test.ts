// The metering's group charge on Postgres runs on sessions that always use its generic plan
// (src/db/connect.ts), and that plan finds accounts and leases through their indexes from a thousand
// accounts on: planned for unknown array lengths, it scanned both tables for every group at 1,000.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { CHARGE_GROUP, CHARGE_GROUP_ORDERED } from '../../src/credits/lease-statements.js';
import { meterStoreFor } from '../../src/credits/meter-store-for.js';
import type { MeterStore } from '../../src/credits/meter-store.js';
import { openStore, type Store } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createPostgresSchema } from '../helpers/backends.js';

const pgUrl = process.env.TEST_DATABASE_URL;
const ACCOUNTS = 3_000;
const id = (i: number) => `acc_${String(i).padStart(6, '0')}`;

describe('the group charge plan (postgres)', { skip: !pgUrl }, () => {
  let store: Store;
  let schema: { url: string; drop(): Promise<void> };
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-plan-'));
  before(async () => {
    schema = await createPostgresSchema(pgUrl!);
    store = openStore({ databaseUrl: schema.url, dataDir });
    await migrateToLatest(store);
    await sql`insert into credit_lease_owners (owner, expires_at) values ('p_other', now() + interval '1 day')`.execute(store.db);
  });

  /** Accounts up to `n` in all, each leased by another live process, and 2,000 owner rows of processes gone; statistics updated. */
  const accounts = async (n: number) => {
    await sql`insert into accounts (id, name, plan_id, balance, reserved, created_at)
              select 'acc_' || lpad(g::text, 6, '0'), 'a', 'free', 1000000, 1000, now()::text from generate_series(0, ${n - 1}) g
              on conflict (id) do nothing`.execute(store.db);
    await sql`insert into credit_leases (account_id, owner, amount) select id, 'p_other', 1000 from accounts on conflict do nothing`.execute(store.db);
    // Owner rows of processes gone (a sweep keeps them for a day, one per process start): with a
    // page or two of them Postgres rightly reads them all; with more, the owner's by its key.
    await sql`insert into credit_lease_owners (owner, expires_at)
              select 'p_gone' || g, now() - interval '1 hour' from generate_series(0, 1999) g on conflict (owner) do nothing`.execute(store.db);
    await sql`analyze`.execute(store.db);
  };
  after(async () => {
    await store.close();
    await schema.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('the charge sessions force generic plans; the store\'s other sessions leave the choice to Postgres', async () => {
    const mode = async (db: NonNullable<Store['chargeDb']>) => (await sql<{ plan_cache_mode: string }>`show plan_cache_mode`.execute(db)).rows[0]!.plan_cache_mode;
    assert.equal(await mode(store.chargeDb!), 'force_generic_plan');
    assert.equal(await mode(store.db), 'auto');
  });

  // Without the statement's `= any($1)` conditions the generic plan scanned both tables at 1,000
  // accounts. (At a few hundred, Postgres scans the accounts table either way, rightly: a page or two.)
  test('the generic plan reads accounts and the owner row by index, and no lease row, for one account and for fifty, with 1,000 and 30,000 stored', async () => {
    for (const stored of [1_000, 30_000]) {
      await accounts(stored);
      // Both texts: over one account, and over several (its accounts locked in id order first).
      for (const text of [CHARGE_GROUP, CHARGE_GROUP_ORDERED]) {
        await store.chargeDb!.connection().execute(async (conn) => {
          // The statement's own text, prepared and explained on one charge session.
          await sql.raw(`prepare charge_probe(text[], bigint[], text, text[], bigint[], bigint[], text[], text[], text[], text, bigint) as ${text}`).execute(conn);
          try {
            for (const n of [1, 50]) {
              const accs = Array.from({ length: n }, (_, i) => id(i * 5));
              const arr = (xs: Array<string | number>) => `'{${xs.join(',')}}'`;
              const plan = (
                await sql
                  .raw<{ 'QUERY PLAN': string }>(
                    `explain (costs off) execute charge_probe(${arr(accs)}, ${arr(accs.map(() => 10))}, 'p_other', ${arr(accs)}, ${arr(accs.map(() => 10))}, ${arr(accs.map(() => 0))}, ${arr(accs.map((_, i) => `r${i}`))}, ${arr(accs.map(() => 'k'))}, ${arr(accs.map(() => 'e'))}, '2026-01-01T00:00:00.000Z', 1)`,
                  )
                  .execute(conn)
              ).rows
                .map((r) => r['QUERY PLAN'])
                .join('\n');
              const what = `${stored} stored, ${n} charged:\n${plan}`;
              assert.doesNotMatch(plan, /Seq Scan on (accounts|credit_lease_owners)/, what);
              assert.match(plan, /Index Scan using accounts_pkey on accounts/, what);
              // The owner row is locked by its key; the lease rows are not read at all (migration 014).
              assert.match(plan, /Index Scan using credit_lease_owners_pkey on credit_lease_owners/, what);
              assert.doesNotMatch(plan, /credit_leases/, what);
            }
            const [row] = (await sql<{ generic_plans: number; custom_plans: number }>`select generic_plans, custom_plans from pg_prepared_statements where name = 'charge_probe'`.execute(conn)).rows;
            assert.deepEqual({ ...row }, { generic_plans: 2, custom_plans: 0 });
          } finally {
            await sql.raw('deallocate charge_probe').execute(conn);
          }
        });
      }
    }
  });

  test('charges through the charge sessions are exact: each account debited by what it was charged, ledger = balance', async () => {
    await accounts(ACCOUNTS);
    const meter: MeterStore = meterStoreFor(store, { leaseSeconds: 30 });
    try {
      const mine = Array.from({ length: 20 }, (_, i) => id(ACCOUNTS - 1 - i * 11));
      const calls = await Promise.all(
        Array.from({ length: 400 }, async (_, i) => {
          const r = await meter.reserve(mine[i % mine.length]!, 7);
          assert.ok(r.ok);
          return meter.settle(r.reservationId, { requestId: `q${i}`, keyId: null, endpoint: 'e' });
        }),
      );
      assert.equal(calls.filter((c) => c?.charged === 7).length, 400);
    } finally {
      await meter.close?.();
    }
    for (const a of [id(ACCOUNTS - 1), id(ACCOUNTS - 1 - 19 * 11)]) {
      // 20 calls of 7 on each; the other process's lease of 1,000 still reserved; the seeded balance has no ledger entry.
      assert.deepEqual(await getBalance(store.db, a), { balance: 1_000_000 - 140, reserved: 1000 });
      assert.equal(await ledgerSum(store.db, a), -140);
    }
  });
});
