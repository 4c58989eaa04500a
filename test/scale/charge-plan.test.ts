// The metering's group charge on Postgres runs on sessions that always use its generic plan
// (src/db/connect.ts), and that plan finds accounts and leases through their indexes from a thousand
// accounts on: planned for unknown array lengths, it scanned both tables for every group at 1,000.
// Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { CHARGE_GROUP, CHARGE_GROUP_LISTS, LeaseStatements } from '../../src/credits/lease-statements.js';
import { meterStoreFor } from '../../src/credits/meter-store-for.js';
import type { MeterStore } from '../../src/credits/meter-store.js';
import { openStore, type Store } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
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

  /** Accounts up to `n` in all, each leased by another live process; statistics updated. */
  const accounts = async (n: number) => {
    await sql`insert into accounts (id, name, plan_id, balance, reserved, created_at)
              select 'acc_' || lpad(g::text, 6, '0'), 'a', 'free', 1000000, 1000, now()::text from generate_series(0, ${n - 1}) g
              on conflict (id) do nothing`.execute(store.db);
    await sql`insert into credit_leases (account_id, owner, amount) select id, 'p_other', 1000 from accounts on conflict do nothing`.execute(store.db);
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
  test('the generic plan reads accounts and leases by index, for one account and for fifty, with 1,000 and 30,000 stored, its columns as arrays or as lists', async () => {
    for (const [stored, lists] of [[1_000, false], [1_000, true], [30_000, false], [30_000, true]] as const) {
      await accounts(stored);
      await store.chargeDb!.connection().execute(async (conn) => {
        // The statement's own text, prepared and explained on one charge session.
        const types = lists ? 'text, text, text, text, text, text, text, text, text, text' : 'text[], bigint[], text, text[], bigint[], bigint[], text[], text[], text[], text';
        await sql.raw(`prepare charge_probe(${types}) as ${lists ? CHARGE_GROUP_LISTS : CHARGE_GROUP}`).execute(conn);
        try {
          for (const n of [1, 50]) {
            const accs = Array.from({ length: n }, (_, i) => id(i * 5));
            const arr = (xs: Array<string | number>) => (lists ? `'${xs.join(',')}'` : `'{${xs.join(',')}}'`);
            const plan = (
              await sql
                .raw<{ 'QUERY PLAN': string }>(
                  `explain (costs off) execute charge_probe(${arr(accs)}, ${arr(accs.map(() => 10))}, 'p_other', ${arr(accs)}, ${arr(accs.map(() => 10))}, ${arr(accs.map(() => 0))}, ${arr(accs.map((_, i) => `r${i}`))}, ${arr(accs.map(() => 'k'))}, ${arr(accs.map(() => 'e'))}, '2026-01-01T00:00:00.000Z')`,
                )
                .execute(conn)
            ).rows
              .map((r) => r['QUERY PLAN'])
              .join('\n');
            const what = `${stored} stored, ${n} charged:\n${plan}`;
            assert.doesNotMatch(plan, /Seq Scan on (accounts|credit_leases)/, what);
            assert.match(plan, /Index Scan using accounts_pkey on accounts/, what);
            assert.match(plan, /Index Scan using credit_leases_pk on credit_leases/, what);
          }
          const [row] = (await sql<{ generic_plans: number; custom_plans: number }>`select generic_plans, custom_plans from pg_prepared_statements where name = 'charge_probe'`.execute(conn)).rows;
          assert.deepEqual({ ...row }, { generic_plans: 2, custom_plans: 0 });
        } finally {
          await sql.raw('deallocate charge_probe').execute(conn);
        }
      });
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

  // The ids this service makes never hold a comma, so groups go as lists; anything else as arrays.
  test('the group charge writes the same entries whether its columns go as lists or as arrays (a comma in a value, a null key, a group of one)', async () => {
    await accounts(ACCOUNTS);
    const sent: string[] = [];
    const chargeDb = store.chargeDb!;
    const recording = { executeQuery: (q: CompiledQuery) => (sent.push(q.sql), chargeDb.executeQuery(q)) } as unknown as Kysely<Database>;
    const statements = new LeaseStatements(store.db, 'p_other', 30_000, recording);
    const [a, b] = [id(7), id(8)];
    const entries = async (requestIds: string[]) =>
      (await sql<{ account_id: string; amount: number; balance_after: number; request_id: string; key_id: string | null; endpoint: string }>`
        select account_id, amount, balance_after, request_id, key_id, endpoint from ledger_entries where request_id = any(${requestIds}::text[]) order by id`.execute(store.db)).rows.map((r) => ({ ...r }));
    const before = { [a]: (await getBalance(store.db, a))!.balance, [b]: (await getBalance(store.db, b))!.balance };

    // Lists: two accounts, three charges, one without a key.
    const rows = await statements.chargeGroup([a, b], [30, 5], { accountIds: [a, b, a], amounts: [10, 5, 20], later: [20, 0, 0], requestIds: ['l1', 'l2', 'l3'], keyIds: ['k1', null, 'k3'], endpoints: ['getTweet', 'getUser', 'getTweet'] });
    assert.match(sent.at(-1)!, /string_to_array/);
    assert.deepEqual([...rows].sort((x, y) => (x.id < y.id ? -1 : 1)), [{ id: a, balance: before[a]! - 30 }, { id: b, balance: before[b]! - 5 }]);
    assert.deepEqual(await entries(['l1', 'l2', 'l3']), [
      { account_id: a, amount: -10, balance_after: before[a]! - 10, request_id: 'l1', key_id: 'k1', endpoint: 'getTweet' },
      { account_id: b, amount: -5, balance_after: before[b]! - 5, request_id: 'l2', key_id: null, endpoint: 'getUser' },
      { account_id: a, amount: -20, balance_after: before[a]! - 30, request_id: 'l3', key_id: 'k3', endpoint: 'getTweet' },
    ]);

    // Lists: a group of one charge without a key (its key list is empty).
    await statements.chargeGroup([b], [4], { accountIds: [b], amounts: [4], later: [0], requestIds: ['l4'], keyIds: [null], endpoints: ['getUser'] });
    assert.match(sent.at(-1)!, /string_to_array/);
    assert.deepEqual(await entries(['l4']), [{ account_id: b, amount: -4, balance_after: before[b]! - 9, request_id: 'l4', key_id: null, endpoint: 'getUser' }]);

    // Arrays: a value with a comma, which a list would split.
    await statements.chargeGroup([a], [3], { accountIds: [a], amounts: [3], later: [0], requestIds: ['x,1'], keyIds: ['k,2'], endpoints: ['getTweet'] });
    assert.doesNotMatch(sent.at(-1)!, /string_to_array/);
    assert.deepEqual(await entries(['x,1']), [{ account_id: a, amount: -3, balance_after: before[a]! - 33, request_id: 'x,1', key_id: 'k,2', endpoint: 'getTweet' }]);

    for (const acc of [a, b]) assert.deepEqual(await getBalance(store.db, acc), { balance: before[acc]! - (acc === a ? 33 : 9), reserved: 1000 - (acc === a ? 33 : 9) });
  });
});
