// Postgres cut off by a network partition (helpers/tcp-partition.ts: silence, no reset). Before,
// a statement sent into it, and a connection opened meanwhile, waited for as long as it lasted: keyed
// calls, /readyz and jobs hung. Now (src/db/stall-guard.ts) each fails within seconds as the store
// unavailable (a 503), a charge is not charged, and everything works again once it heals; a slow
// statement on a server that answers is left alone. An open connection that falls silent while new
// ones pass (a NAT or firewall that forgot it) is closed too, and its server session ended, once the
// server says that session runs nothing. Needs TEST_DATABASE_URL (skipped without).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts-repo.js';
import { getBalance, grant, ledgerSum } from '../../src/credits/credits-repo.js';
import { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';
import { CONNECT_TIMEOUT_MS, openStore, type Store } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createRequire } from 'node:module';
import type pgTypes from 'pg';
import { IDLE_MS, LOST_MS, PROBE_TIMEOUT_MS, serverProbe, STALL_MS, type Asked, type SessionSeen } from '../../src/db/stall-guard.js';
import { isStoreUnavailable } from '../../src/errors/store-unavailable.js';
import { AppError } from '../../src/errors/app-error.js';
import { createTestStore, type TestStore } from '../helpers/backends.js';
import { until } from '../helpers/processes.js';
import { TcpPartition } from '../helpers/tcp-partition.js';

const pg = process.env.TEST_DATABASE_URL;
/** Stalled for STALL_MS, found at the next check (each second), then the probe's own wait, and some slack. */
const CUT_WITHIN_MS = STALL_MS + 1_000 + PROBE_TIMEOUT_MS + 2_000;
/** The same for a connection silent while the server answers others: taken for lost after LOST_MS. */
const LOST_WITHIN_MS = LOST_MS + 1_000 + PROBE_TIMEOUT_MS + 2_000;
const nothing = () => [];

/**
 * Resolves with the time `p` took to reject as the store unavailable: the store's error, or, for a
 * charge whose outcome could not be read back, the 503 saying it may have been charged, caused by it.
 */
async function failsUnavailable(p: Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await assert.rejects(p, (e: unknown) => {
    const outcomeUnknown = e instanceof AppError && e.code === 'service_unavailable' && e.details?.maybeCharged === true;
    const cause = outcomeUnknown ? (e as { cause?: unknown }).cause : e;
    assert.ok(isStoreUnavailable(cause), `not taken for the store unavailable: ${String(e)}`);
    return true;
  });
  return performance.now() - t0;
}

describe('Postgres behind a network partition (postgres)', { skip: !pg }, () => {
  let ts: TestStore;
  let proxy: TcpPartition;
  let url: string;
  const opened: Store[] = [];
  const through = () => {
    const s = openStore({ databaseUrl: url, dataDir: ts.dataDir });
    opened.push(s);
    return s;
  };

  before(async () => {
    ts = await createTestStore('postgres');
    await migrateToLatest(ts.store);
    const u = new URL(ts.env.DATABASE_URL!);
    proxy = new TcpPartition({ host: u.hostname, port: Number(u.port || 5432) });
    await proxy.start();
    u.host = `127.0.0.1:${proxy.port}`;
    url = u.toString();
  });
  after(async () => {
    proxy.heal();
    for (const s of opened) await s.close().catch(() => undefined);
    await proxy.close();
    await ts.dispose();
  });

  test('a statement on an open connection and a connection opened meanwhile fail as the store unavailable within seconds; after the heal both work', { timeout: 60_000 }, async () => {
    const store = through();
    await sql`select 1`.execute(store.db);
    proxy.partition();
    try {
      const [sent, connecting] = await Promise.all([failsUnavailable(sql`select 1`.execute(store.db)), failsUnavailable(sql`select 1`.execute(through().db))]);
      assert.ok(sent < CUT_WITHIN_MS, `the statement failed after ${Math.round(sent)} ms`);
      assert.ok(connecting < CONNECT_TIMEOUT_MS + 2_000, `the connection failed after ${Math.round(connecting)} ms`);
    } finally {
      proxy.heal();
    }
    assert.equal((await sql<{ n: number }>`select 2 as n`.execute(store.db)).rows[0]!.n, 2);
  });

  test('a charge sent into the partition is answered uncharged; after the heal the next is charged, and the ledger is exact', { timeout: 60_000 }, async () => {
    const { accountId } = await createAccount(ts.store.db, { name: 'cut', planId: 'free' });
    await grant(ts.store.db, accountId, 1_000, 't');
    const store = through();
    const meter = new PostgresMeterStore(store.db, { leaseSeconds: 30 }, store.chargeDb);
    try {
      const held = await meter.reserve(accountId, 100);
      assert.ok(held.ok);
      proxy.partition();
      try {
        const took = await failsUnavailable(meter.settle(held.reservationId, { requestId: 'req_cut_1', keyId: null, endpoint: 'e' }));
        // The group's outcome is then looked for (lost-answers.ts) on a statement that stalls in turn.
        assert.ok(took < 2 * CUT_WITHIN_MS, `the charge failed after ${Math.round(took)} ms`);
      } finally {
        proxy.heal();
      }
      const next = await meter.reserve(accountId, 100);
      assert.ok(next.ok);
      assert.ok(await meter.settle(next.reservationId, { requestId: 'req_cut_2', keyId: null, endpoint: 'e' }));
    } finally {
      await meter.close();
    }
    assert.deepEqual(await getBalance(ts.store.db, accountId), { balance: 900, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, accountId), 900);
    const charged = (await ts.store.db.selectFrom('ledger_entries').select('request_id').where('account_id', '=', accountId).where('kind', '=', 'charge').execute()).map((e) => e.request_id);
    assert.deepEqual(charged, ['req_cut_2']);
  });

  test('the probe: a server that refuses it (a SQLSTATE: too many connections, no such database) is reachable; silence is not', { timeout: 60_000 }, async () => {
    const { Client } = createRequire(import.meta.url)('pg') as typeof pgTypes;
    const missing = new URL(url);
    missing.pathname = '/sdg_no_such_database';
    // 3D000 from Postgres itself: it answers, so statements waiting on it are not cut.
    await serverProbe(Client, missing.toString())([], nothing);
    proxy.partition();
    try {
      const t0 = performance.now();
      await assert.rejects(serverProbe(Client, url)([], nothing));
      assert.ok(performance.now() - t0 < PROBE_TIMEOUT_MS + 1_000);
    } finally {
      proxy.heal();
    }
  });

  test('a statement waiting for a free pooled connection behind slow ones is not refused (the connect timeout is for a new connection only)', { timeout: 60_000 }, async () => {
    const store = openStore({ databaseUrl: url, dataDir: ts.dataDir, poolSize: 1 });
    opened.push(store);
    const seconds = CONNECT_TIMEOUT_MS / 1000 + 2;
    const slow = sql`select 1 as n from pg_sleep(${seconds})`.execute(store.db);
    await new Promise((r) => setTimeout(r, 200));
    const queued = await sql<{ n: number }>`select 2 as n`.execute(store.db);
    assert.equal(queued.rows[0]!.n, 2);
    assert.equal((await slow).rows.length, 1);
  });

  test('a statement slower than the stall on a server that answers is left to finish', { timeout: 60_000 }, async () => {
    const store = through();
    const seconds = (STALL_MS + PROBE_TIMEOUT_MS) / 1000 + 1;
    const t0 = performance.now();
    const r = await sql<{ n: number }>`select 1 as n from pg_sleep(${seconds})`.execute(store.db);
    assert.equal(r.rows[0]!.n, 1);
    assert.ok(performance.now() - t0 >= seconds * 1000 - 100, 'it did sleep');
  });
  test('an open connection that falls silent while new ones pass: its statement fails within seconds, its session is ended and its locks freed', { timeout: 60_000 }, async () => {
    const { accountId } = await createAccount(ts.store.db, { name: 'forgotten', planId: 'free' });
    const store = through();
    let pid = 0;
    const stalled = store.db.transaction().execute(async (trx) => {
      pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
      // A row lock the session keeps while its transaction is open.
      await sql`update accounts set name = 'locked' where id = ${accountId}`.execute(trx);
      proxy.silenceOpen();
      await sql`select 1`.execute(trx);
    });
    try {
      const took = await failsUnavailable(stalled);
      assert.ok(took < LOST_WITHIN_MS, `the statement failed after ${Math.round(took)} ms`);
    } finally {
      proxy.heal();
    }
    // Ended by the guard (without it, the server would keep it, and its lock, until its keepalive noticed).
    // (pg_terminate_backend signals the session; it leaves within moments.)
    const sessions = async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where pid = ${pid}`.execute(ts.store.db)).rows[0]!.n;
    await until("the silent connection's session gone", 5_000, async () => (await sessions()) === 0);
    await ts.store.db.transaction().execute(async (trx) => {
      await sql`set local lock_timeout = '2s'`.execute(trx);
      await sql`update accounts set name = 'free again' where id = ${accountId}`.execute(trx);
    });
    // Rolled back: the update under way never committed.
    assert.equal((await ts.store.db.selectFrom('accounts').select('name').where('id', '=', accountId).executeTakeFirstOrThrow()).name, 'free again');
    // The store goes on working on new connections.
    assert.equal((await sql<{ n: number }>`select 2 as n`.execute(store.db)).rows[0]!.n, 2);
  });

  test('a charge sent on a connection that falls silent while new ones pass is answered uncharged within seconds; the ledger is exact', { timeout: 60_000 }, async () => {
    const { accountId } = await createAccount(ts.store.db, { name: 'forgotten charge', planId: 'free' });
    await grant(ts.store.db, accountId, 1_000, 't');
    const store = through();
    const meter = new PostgresMeterStore(store.db, { leaseSeconds: 30 }, store.chargeDb);
    const charge = async (requestId: string) => {
      const held = await meter.reserve(accountId, 100);
      assert.ok(held.ok);
      return meter.settle(held.reservationId, { requestId, keyId: null, endpoint: 'e' });
    };
    try {
      // The first opens the connections (the charge's own among them) that then fall silent.
      assert.ok(await charge('req_forgotten_1'));
      const held = await meter.reserve(accountId, 100);
      assert.ok(held.ok);
      proxy.silenceOpen();
      try {
        const took = await failsUnavailable(meter.settle(held.reservationId, { requestId: 'req_forgotten_2', keyId: null, endpoint: 'e' }));
        // The group's outcome is then looked for (lost-answers.ts), perhaps on a connection silent in turn.
        assert.ok(took < 2 * LOST_WITHIN_MS, `the charge failed after ${Math.round(took)} ms`);
      } finally {
        proxy.heal();
      }
      assert.ok(await charge('req_forgotten_3'));
    } finally {
      await meter.close();
    }
    assert.deepEqual(await getBalance(ts.store.db, accountId), { balance: 800, reserved: 0 });
    assert.equal(await ledgerSum(ts.store.db, accountId), 800);
    const charged = (await ts.store.db.selectFrom('ledger_entries').select('request_id').where('account_id', '=', accountId).where('kind', '=', 'charge').orderBy('id').execute()).map((e) => e.request_id);
    assert.deepEqual(charged, ['req_forgotten_1', 'req_forgotten_3']);
  });

  test('the probe: what it sees of the sessions asked about (gone, idle, or running), the ends it makes, and no id trusted through a pooler', { timeout: 60_000 }, async () => {
    const { Client } = createRequire(import.meta.url)('pg') as typeof pgTypes;
    // What a pooler gives: a process id that is not the server session's.
    class PoolerLike extends Client {
      get processID(): number {
        return 1;
      }
      set processID(_: number) {}
    }
    // A login role whose sessions take another role at login (current_user is then not usename).
    // Roles belong to the whole server: fixed names, and any left by a run that was killed dropped first.
    const [login, owner] = ['sdg_test_login', 'sdg_test_owner'];
    await sql.raw(`drop role if exists ${login}; drop role if exists ${owner}`).execute(ts.store.db);
    await sql.raw(`create role ${owner}; create role ${login} login; grant ${owner} to ${login}; alter role ${login} set role = ${owner}`).execute(ts.store.db);
    const asLogin = new URL(url);
    asLogin.username = login;
    const clients: pgTypes.Client[] = [];
    const open = async (connectionString: string) => {
      const c = new Client({ connectionString });
      c.on('error', () => undefined);
      await c.connect();
      clients.push(c);
      return c;
    };
    const pidOf = async (c: pgTypes.Client) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    /** Runs the probe; what it saw, and asks it to end `end` (of those seen). */
    const probe = async (P: typeof Client, u: string, asked: Asked[], end: (seen: SessionSeen[]) => number[] = nothing) => {
      let seen: SessionSeen[] | undefined;
      await serverProbe(P, u)(asked, (s) => {
        seen = s;
        return end(s);
      });
      return (seen ?? []).sort((a, b) => a.pid - b.pid);
    };
    const alive = async (pids: number[]) => (await ts.store.db.executeQuery(sql<{ pid: number }>`select pid from pg_stat_activity where pid = any(${pids}::int[]) order by pid`.compile(ts.store.db))).rows.map((r) => r.pid);
    try {
      const [idle, busy, other, otherIdle] = [await open(ts.env.DATABASE_URL!), await open(ts.env.DATABASE_URL!), await open(asLogin.toString()), await open(asLogin.toString())];
      const [idlePid, busyPid, otherPid, otherIdlePid] = [await pidOf(idle), await pidOf(busy), await pidOf(other), await pidOf(otherIdle)];
      const gonePid = 2_147_483_000;
      const sleeping = Promise.all([busy.query('select pg_sleep(5)'), other.query('select pg_sleep(5)')]);
      sleeping.catch(() => undefined); // a failure below ends them: its own error is the one to see
      await new Promise((r) => setTimeout(r, IDLE_MS + 500));
      const age = 3;
      const asked = [idlePid, busyPid, gonePid].map((pid) => ({ pid, ageS: age }));
      // Through a pooler nothing is seen, and nothing ended.
      assert.deepEqual(await probe(PoolerLike, url, asked, () => [idlePid]), []);
      assert.deepEqual(await alive([idlePid]), [idlePid]);
      const seen = (pid: number, gone: boolean, idle: boolean): SessionSeen => ({ pid, gone, idle });
      assert.deepEqual(await probe(Client, url, asked), [seen(idlePid, false, true), seen(busyPid, false, false), seen(gonePid, true, false)].sort((a, b) => a.pid - b.pid));
      // A pid whose session is far older or younger than the connection asked about is another session (a reused pid): gone.
      assert.deepEqual(await probe(Client, url, [{ pid: idlePid, ageS: age + 60 }]), [seen(idlePid, true, true)]);
      // A role taken at login: its sessions are seen as they are (by the login role), running or idle.
      const asked2 = [otherPid, otherIdlePid].map((pid) => ({ pid, ageS: age }));
      assert.deepEqual(await probe(Client, asLogin.toString(), asked2), [seen(otherPid, false, false), seen(otherIdlePid, false, true)].sort((a, b) => a.pid - b.pid));
      // Ends only what is still idle: the running session asked for is left, the idle one ended.
      await probe(Client, url, asked, () => [busyPid, idlePid]);
      await until('the idle session ended', 5_000, async () => (await alive([idlePid, busyPid])).length === 1);
      assert.deepEqual(await alive([idlePid, busyPid]), [busyPid]);
      await sleeping;
      // A session idle for less than IDLE_MS (an answer may be on its way) is not idle yet.
      assert.deepEqual(await probe(Client, url, [{ pid: busyPid, ageS: age + 5 }]), [seen(busyPid, false, false)]);
    } finally {
      for (const c of clients) await c.end().catch(() => undefined);
      await sql.raw(`drop role if exists ${login}; drop role if exists ${owner}`).execute(ts.store.db);
    }
  });
});
