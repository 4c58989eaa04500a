// The operator command line's newer commands: keys list/create, usage, jobs show, and the header
// row of accounts list. Each spawns the real `sdg` against a store.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createKey } from '../../src/accounts/accounts-repo.js';
import { grant } from '../../src/credits/credits-repo.js';
import { humanLine } from '../../src/cli/log-format.js';
import { createBatch } from '../../src/watchlist/batch-repo.js';
import { createExport } from '../../src/exports/export-repo.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { repoRoot, runSdg } from '../helpers/processes.js';

for (const backend of backends()) {
  describe(`sdg operator commands (${backend})`, () => {
    let ts: TestStore;
    let accountId: string;
    before(async () => {
      ts = await createTestStore(backend);
      await migrateToLatest(ts.store);
      const c = await runSdg(['accounts', 'create', '--name', 'Ada Lovelace', '--credits', '250', '--plan', 'free', '--json'], ts.env);
      assert.equal(c.code, 0, c.stderr);
      accountId = (JSON.parse(c.stdout) as { accountId: string }).accountId;
    });
    after(() => ts.dispose());

    test('migrate --to takes the schema down to a named migration and back up; an unknown name is refused', async () => {
      // On the embedded store, with no process holding it open (this test's own connection would
      // count as one: see the next test).
      const own = backend === 'sqlite' ? mkdtempSync(join(tmpdir(), 'sdg-migrate-')) : undefined;
      const env = own ? { DATA_DIR: own } : ts.env;
      if (own) assert.equal((await runSdg(['migrate'], env)).code, 0);
      const down = await runSdg(['migrate', '--to', '010-ledger-no-fk-pg', '--json'], env);
      assert.equal(down.code, 0, down.stderr);
      assert.deepEqual(JSON.parse(down.stdout), { applied: [], reverted: ['015-batch-account-status-index', '014-lease-spending-in-ledger', '013-active-keys-index', '012-ledger-one-index', '011-crawl-cycle-counters'] });
      const up = await runSdg(['migrate'], env);
      assert.equal(up.code, 0, up.stderr);
      assert.equal(up.stdout.trim(), 'applied: 011-crawl-cycle-counters, 012-ledger-one-index, 013-active-keys-index, 014-lease-spending-in-ledger, 015-batch-account-status-index');
      const oneWay = await runSdg(['migrate', '--to', '003-bulk'], env);
      assert.equal(oneWay.code, 2);
      assert.match(oneWay.stderr, /^sdg: Cannot migrate down to 003-bulk: 004-bluesky, 006-credit-leases, 007-export-retention, 009-hardening cannot be undone \(no down step\)\.$/m);
      const bad = await runSdg(['migrate', '--to', '099-nothing'], env);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /^sdg: No migration 099-nothing; this release's: 001-core, .*015-batch-account-status-index\.$/m);
      if (own) rmSync(own, { recursive: true, force: true });
    });

    if (backend === 'postgres') {
      test('migrate --to refuses while processes are at work on the Postgres store (a live API process, a job in hand), and changes nothing; --force goes on', async () => {
        const names = async () => (await sql<{ name: string }>`select name from kysely_migration`.execute(ts.store.db)).rows.map((m) => m.name);
        // An API process renewing its liveness (as postgres-meter-store.ts does while it leases).
        await sql`insert into credit_lease_owners (owner, expires_at) values ('proc-live', now() + interval '30 seconds')`.execute(ts.store.db);
        try {
          const r = await runSdg(['migrate', '--to', '014-lease-spending-in-ledger', '--json'], ts.env);
          assert.equal(r.code, 2, r.stderr);
          const err = JSON.parse(r.stderr) as { error: { code: string; message: string; details: { apiProcesses: number; jobsInHand: number } } };
          assert.equal(err.error.code, 'refused');
          assert.deepEqual(err.error.details, { apiProcesses: 1, jobsInHand: 0 });
          assert.match(err.error.message, /stop every API process, worker and scheduler before `sdg migrate --to`/);
          assert.ok((await names()).includes('015-batch-account-status-index'), 'nothing reverted');
        } finally {
          await sql`delete from credit_lease_owners where owner = 'proc-live'`.execute(ts.store.db);
        }
        // A killed process's row, expired: not at work.
        await sql`insert into credit_lease_owners (owner, expires_at) values ('proc-dead', now() - interval '1 second')`.execute(ts.store.db);
        // A worker on an export, its lease unexpired.
        await createExport(ts.store.db, { id: '700000001', accountId, start: '2025-06-01T00:00:00.000Z', end: '2025-06-02T00:00:00.000Z', now: new Date().toISOString() });
        await ts.store.db.updateTable('exports').set({ status: 'running', lease_owner: 'w', lease_expires_at: new Date(Date.now() + 60_000).toISOString() }).where('id', '=', '700000001').execute();
        try {
          const r = await runSdg(['migrate', '--to', '014-lease-spending-in-ledger'], ts.env);
          assert.equal(r.code, 2, r.stderr);
          assert.match(r.stderr, /\(0 API processes holding credit leases, 1 job in a worker's hands\)/);
          // The operator knows better (the worker was killed): --force goes on, and back up after.
          const forced = await runSdg(['migrate', '--to', '014-lease-spending-in-ledger', '--force', '--json'], ts.env);
          assert.equal(forced.code, 0, forced.stderr);
          assert.deepEqual(JSON.parse(forced.stdout).reverted, ['015-batch-account-status-index']);
          assert.equal((await runSdg(['migrate'], ts.env)).code, 0);
        } finally {
          await ts.store.db.deleteFrom('exports').where('id', '=', '700000001').execute();
          await sql`delete from credit_lease_owners where owner = 'proc-dead'`.execute(ts.store.db);
        }
      });
    }

    if (backend === 'sqlite') {
      test('migrate --to refuses while another process has the embedded store open, and changes nothing', async () => {
        // ts.store, this test's connection, stands for a running server.
        const r = await runSdg(['migrate', '--to', '012-ledger-one-index'], ts.env);
        assert.equal(r.code, 2);
        assert.match(r.stderr, /^sdg: The store at \S+ is in use: stop every process that uses DATA_DIR \(the server, workers, the scheduler\) before `sdg migrate --to`/m);
        const names = (await sql<{ name: string }>`select name from kysely_migration`.execute(ts.store.db)).rows.map((m) => m.name);
        assert.ok(names.includes('015-batch-account-status-index'), 'nothing reverted');
        // Bringing the schema up to date is still allowed while it runs (a server does it at start).
        assert.equal((await runSdg(['migrate'], ts.env)).code, 0);
      });
    }

    test('accounts list has a header row and aligned columns', async () => {
      const r = await runSdg(['accounts', 'list'], ts.env);
      assert.equal(r.code, 0, r.stderr);
      const [header, row] = r.stdout.trimEnd().split('\n');
      assert.match(header!, /^ACCOUNT\s+PLAN\s+BALANCE\s+RATE\/MIN\s+CREATED\s+NAME$/);
      assert.ok(row!.startsWith(accountId));
      assert.equal(row!.indexOf('free'), header!.indexOf('PLAN'), 'columns line up');
      assert.ok(row!.endsWith('Ada Lovelace'));
    });

    test('a blank, overlong or control-character name is refused (exit 2) and nothing is made', async () => {
      const before = JSON.parse((await runSdg(['accounts', 'list', '--json'], ts.env)).stdout) as unknown[];
      for (const [args, message] of [
        [['accounts', 'create', '--name', '   ', '--credits', '5'], /--name must not be blank/],
        [['accounts', 'create', '--name', 'x'.repeat(201), '--credits', '5'], /--name must be at most 200 characters/],
        [['accounts', 'create', '--name', 'a\u001b[31mred', '--credits', '5'], /--name must not hold control or text-direction characters/],
        [['accounts', 'create', '--name', 'a\u202Ebc', '--credits', '5'], /--name must not hold control or text-direction characters/],
        [['accounts', 'create', '--name', '\u200B\u200B', '--credits', '5'], /--name must not be blank/],
        [['accounts', 'create', '--name', 'ok', '--credits', '1e3'], /--credits must be a non-negative integer in decimal digits/],
        [['accounts', 'create', '--name', 'ok', '--credits', '0x10'], /--credits must be a non-negative integer in decimal digits/],
        [['keys', 'create', accountId, '--name', ''], /--name must not be blank/],
      ] as const) {
        const r = await runSdg([...args], ts.env);
        assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
        assert.match(r.stderr, message);
      }
      const after = JSON.parse((await runSdg(['accounts', 'list', '--json'], ts.env)).stdout) as unknown[];
      assert.equal(after.length, before.length);
      const keys = JSON.parse((await runSdg(['keys', 'list', accountId, '--json'], ts.env)).stdout) as unknown[];
      assert.equal(keys.length, 1, 'no key made');
    });

    test('a grant whose note is blank, overlong or holds control or text-direction characters is refused (exit 2) and grants nothing', async () => {
      // The note is shown in the account's usage (API, dashboard, sdg-client): a label's rules.
      // Its own account: the ledger of the shared one is asserted whole further on.
      const made = JSON.parse((await runSdg(['accounts', 'create', '--name', 'Notes', '--credits', '0', '--json'], ts.env)).stdout) as { accountId: string };
      const balance = async () =>
        (JSON.parse((await runSdg(['accounts', 'list', '--json'], ts.env)).stdout) as Array<{ accountId: string; balance: number }>).find((a) => a.accountId === made.accountId)!.balance;
      const before = await balance();
      for (const [note, message] of [
        ['N'.repeat(201), /--note must be at most 200 characters/],
        ['refund \u202Edaolnwod\u202C ok', /--note must not hold control or text-direction characters/],
        ['two\nlines', /--note must not hold control or text-direction characters/],
        ['', /--note must not be blank/],
      ] as const) {
        const r = await runSdg(['credits', 'grant', made.accountId, '5', '--note', note], ts.env);
        assert.equal(r.code, 2, r.stderr);
        assert.match(r.stderr, message);
      }
      assert.equal(await balance(), before);
      const ok = await runSdg(['credits', 'grant', made.accountId, '5', '--note', 'refund for #42 🚀'], ts.env);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(await balance(), before + 5);
    });

    test("a key named by its caller with terminal escapes is listed with them written out, not sent to the operator's terminal", async () => {
      // Through the API a key's name may hold any text; here it is written to the store as the API would.
      const other = JSON.parse((await runSdg(['accounts', 'create', '--name', 'Grace', '--credits', '0', '--json'], ts.env)).stdout) as { accountId: string };
      await createKey(ts.store.db, other.accountId, 'ok\u001b]0;owned\u0007\u001b[2J\nfake row');
      const l = await runSdg(['keys', 'list', other.accountId], ts.env);
      assert.equal(l.code, 0, l.stderr);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(l.stdout, /[\u0000-\u0009\u000b-\u001f\u007f]/, 'no control character but line ends');
      assert.equal(l.stdout.trimEnd().split('\n').length, 3, 'a header and two keys, the newline in the name written out');
      assert.ok(l.stdout.includes('ok\\x1b]0;owned\\x07\\x1b[2J\\x0afake row'), l.stdout);
      // A text-direction control is written out too: the rest of the line would read reversed.
      await createKey(ts.store.db, other.accountId, 'abc\u202Edef');
      const bidi = await runSdg(['keys', 'list', other.accountId], ts.env);
      assert.ok(bidi.stdout.includes('abc\\u202edef'), bidi.stdout);
      const json = JSON.parse((await runSdg(['keys', 'list', other.accountId, '--json'], ts.env)).stdout) as Array<{ name: string | null }>;
      assert.ok(json.some((k) => k.name === 'ok\u001b]0;owned\u0007\u001b[2J\nfake row'), '--json keeps the name as stored');
    });

    test('a grant that would take a balance past 2^53 - 1 is refused, and the ledger still sums to the balance', async () => {
      const made = JSON.parse((await runSdg(['accounts', 'create', '--name', 'Rich', '--credits', '100', '--json'], ts.env)).stdout) as { accountId: string };
      const top = await runSdg(['credits', 'grant', made.accountId, String(Number.MAX_SAFE_INTEGER - 100), '--json'], ts.env);
      assert.equal(top.code, 0, top.stderr);
      assert.equal((JSON.parse(top.stdout) as { balance: number }).balance, Number.MAX_SAFE_INTEGER);
      // On SQLite this grant of 1 changed nothing while its ledger entry said 1.
      const over = await runSdg(['credits', 'grant', made.accountId, '1'], ts.env);
      assert.equal(over.code, 2, over.stderr);
      assert.match(over.stderr, /^sdg: A grant of 1 would take the balance \(9007199254740991\) past 9007199254740991, the most an account holds\.$/m);
      const big = await runSdg(['credits', 'grant', made.accountId, '9007199254740992'], ts.env);
      assert.equal(big.code, 2);
      assert.match(big.stderr, /credits must be a positive integer in decimal digits, at most 9007199254740991/);
      const sums = await sql<{ total: string | number; balance: string | number }>`select (select sum(amount) from ledger_entries where account_id = ${made.accountId}) as total, (select balance from accounts where id = ${made.accountId}) as balance`.execute(ts.store.db);
      assert.equal(String(sums.rows[0]!.total), String(Number.MAX_SAFE_INTEGER));
      assert.equal(String(sums.rows[0]!.balance), String(Number.MAX_SAFE_INTEGER));
    });

    test('keys create and keys list; the plan caps keys', async () => {
      const c = await runSdg(['keys', 'create', accountId, '--name', 'ci', '--json'], ts.env);
      assert.equal(c.code, 0, c.stderr);
      const k = JSON.parse(c.stdout) as { id: string; keyId: string; apiKey: string; prefix: string };
      assert.match(k.apiKey, /^sdg_live_/);
      assert.equal(k.id, k.keyId, 'named id, as keys list names it');
      const l = await runSdg(['keys', 'list', accountId, '--json'], ts.env);
      const list = JSON.parse(l.stdout) as Array<{ id: string; name: string; key?: string }>;
      assert.equal(list.length, 2);
      assert.equal(list[0]!.id, k.keyId, 'newest first');
      assert.ok(!l.stdout.includes(k.apiKey), 'never the secret');
      const human = await runSdg(['keys', 'list', accountId], ts.env);
      assert.match(human.stdout.split('\n')[0]!, /^KEY\s+PREFIX\s+CREATED\s+REVOKED\s+NAME$/);
      // The free plan holds 5 active keys.
      for (let i = 0; i < 3; i++) {
        const r = await runSdg(['keys', 'create', accountId], ts.env);
        assert.equal(r.code, 0, r.stderr);
      }
      const over = await runSdg(['keys', 'create', accountId], ts.env);
      assert.equal(over.code, 2);
      assert.match(over.stderr, /limit of 5.*sdg keys revoke/);
      const none = await runSdg(['keys', 'list', 'acc_nobody'], ts.env);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /No account acc_nobody/);
      // Under --json the failure is JSON too, on stderr.
      const noneJson = await runSdg(['keys', 'list', 'acc_nobody', '--json'], ts.env);
      assert.equal(noneJson.code, 2);
      assert.deepEqual(JSON.parse(noneJson.stderr), { error: { code: 'refused', message: 'No account acc_nobody.' }, exitCode: 2 });
    });

    test('usage shows the ledger with opaque ids and the balance', async () => {
      await runSdg(['credits', 'grant', accountId, '50'], ts.env);
      const r = await runSdg(['usage', accountId, '--json'], ts.env);
      assert.equal(r.code, 0, r.stderr);
      const u = JSON.parse(r.stdout) as { balance: number; entries: Array<{ id: string; amount: number; note: string }> };
      assert.equal(u.balance, 300);
      assert.deepEqual(
        u.entries.map((e) => e.amount),
        [50, 250],
      );
      for (const e of u.entries) assert.match(e.id, /^led_/);
      const human = await runSdg(['usage', accountId, '--limit', '1'], ts.env);
      const lines = human.stdout.trimEnd().split('\n');
      assert.equal(lines.length, 3, 'balance, header, one entry');
      assert.match(lines[1]!, /^ID\s+CREATED\s+KIND\s+AMOUNT/);
      assert.ok(lines[2]!.startsWith(`${u.entries[0]!.id} `), 'the readable table shows the same opaque id');
    });

    test('usage reads the balance and the entries from one snapshot, while grants land; lists take at most 1000', async () => {
      let stop = false;
      const granting = (async () => {
        while (!stop) {
          await grant(ts.store.db, accountId, 1, 'snapshot');
          // On SQLite every step is synchronous underneath: let the child's output be read.
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      try {
        for (let i = 0; i < 4; i++) {
          const r = await runSdg(['usage', accountId, '--limit', '1', '--json'], ts.env);
          assert.equal(r.code, 0, r.stderr);
          const u = JSON.parse(r.stdout) as { balance: number; entries: Array<{ balanceAfter: number }> };
          assert.equal(u.entries[0]!.balanceAfter, u.balance);
        }
      } finally {
        stop = true;
        await granting;
      }
      for (const args of [['usage', accountId, '--limit', '1001'], ['keys', 'list', accountId, '--limit', '1001']]) {
        const r = await runSdg(args, ts.env);
        assert.equal(r.code, 2, args.join(' '));
        assert.match(r.stderr, /^sdg: --limit must be at most 1000\.$/m);
      }
    });

    test('jobs show finds a batch, an export, and says when there is no such job', async () => {
      const now = new Date().toISOString();
      await createBatch(ts.store.db, { id: 'wlb_test1', accountId, operation: 'add', items: [{ socialUserId: '1', username: null }], now });
      await createExport(ts.store.db, { id: '123456789', accountId, start: '2025-06-01T00:00:00.000Z', end: '2025-06-02T00:00:00.000Z', now });
      const b = JSON.parse((await runSdg(['jobs', 'show', 'wlb_test1', '--json'], ts.env)).stdout) as Record<string, unknown>;
      assert.equal(b.kind, 'watchlist_batch');
      assert.equal(b.status, 'queued');
      assert.deepEqual(b.items, { pending: 1 });
      // camelCase as `jobs list --json` (and the API) name fields, not the store's columns.
      assert.equal(b.accountId, accountId);
      assert.ok(typeof b.createdAt === 'string' && !('created_at' in b), JSON.stringify(b));
      const e = await runSdg(['jobs', 'show', '123456789'], ts.env);
      assert.match(e.stdout, /^FIELD\s+VALUE\nkind\s+export\n/);
      const none = await runSdg(['jobs', 'show', 'wlb_missing'], ts.env);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /No job wlb_missing/);
    });

    test('jobs list: the newest jobs of every account, filtered by kind, status and account; bad filters exit 2', async () => {
      const other = (JSON.parse((await runSdg(['accounts', 'create', '--name', 'Other', '--json'], ts.env)).stdout) as { accountId: string }).accountId;
      const at = (minutes: number) => new Date(Date.UTC(2030, 0, 1, 0, minutes)).toISOString();
      await createBatch(ts.store.db, { id: 'wlb_list1', accountId, operation: 'add', items: [{ socialUserId: '1', username: null }], now: at(1) });
      await createExport(ts.store.db, { id: '900000001', accountId: other, start: '2025-06-01T00:00:00.000Z', end: '2025-06-02T00:00:00.000Z', now: at(2) });
      await createExport(ts.store.db, { id: '900000002', accountId, start: '2025-06-01T00:00:00.000Z', end: '2025-06-02T00:00:00.000Z', now: at(3) });
      await ts.store.db.updateTable('exports').set({ status: 'failed', error: 'the object store refused the upload', attempts: 3, completed_at: at(4) }).where('id', '=', '900000002').execute();
      type Row = { kind: string; id: string; accountId: string | null; status: string; error: string | null; attempts: number | null };
      const list = async (...args: string[]) => {
        const r = await runSdg(['jobs', 'list', ...args, '--json'], ts.env);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as Row[];
      };
      // Newest first (created in 2030, after every other job of this store).
      const newest = await list('--limit', '3');
      assert.deepEqual(newest.map((j) => [j.kind, j.id, j.status]), [['export', '900000002', 'failed'], ['export', '900000001', 'queued'], ['batch', 'wlb_list1', 'queued']]);
      const failed = await list('--status', 'failed');
      assert.deepEqual(failed.map((j) => ({ id: j.id, accountId: j.accountId, error: j.error, attempts: j.attempts })), [{ id: '900000002', accountId, error: 'the object store refused the upload', attempts: 3 }]);
      assert.deepEqual((await list('--kind', 'export', '--account', other)).map((j) => j.id), ['900000001']);
      assert.ok((await list('--kind', 'batch')).every((j) => j.kind === 'batch'));
      assert.deepEqual((await list('--kind', 'batch', '--account', accountId)).map((j) => j.id).slice(0, 1), ['wlb_list1']);
      assert.deepEqual((await list('--kind', 'batch', '--account', other)).map((j) => j.id), []);
      const table = await runSdg(['jobs', 'list', '--status', 'failed'], ts.env);
      assert.match(table.stdout, /^KIND\s+ID\s+ACCOUNT\s+STATUS\s+CREATED\s+FINISHED\s+ATTEMPTS\s+ERROR\nexport\s+900000002\s+acc_\S+\s+failed\s/);
      for (const args of [['--kind', 'job'], ['--kind', 'cycle', '--status', 'failed'], ['--status', 'stuck'], ['--limit', '0'], ['--account', 'acc_nope'], ['--kind', 'cycle', '--account', accountId]]) {
        const bad = await runSdg(['jobs', 'list', ...args], ts.env);
        assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stdout}${bad.stderr}`);
        assert.match(bad.stderr, /^sdg: /);
      }
    });
  });
}

test('a command that finds no embedded store says it made one (DATA_DIR mistyped, or run from another directory)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sdg-new-store-'));
  try {
    const first = await runSdg(['accounts', 'list', '--json'], { DATA_DIR: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /^sdg: no store was at \S+gateway\.sqlite; made a new one\. If the gateway runs with another DATA_DIR, it will not see this\.$/m);
    const again = await runSdg(['accounts', 'list', '--json'], { DATA_DIR: dir });
    assert.equal(again.stderr, '', 'said once, when it was made');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('worker log lines write control characters out', () => {
  const line = humanLine(JSON.stringify({ level: 30, time: 0, msg: 'batch done\u001b[31m', username: 'a\u001b]0;x\u0007' }));
  assert.equal(line, '1970-01-01T00:00:00.000Z INFO  batch done\\x1b[31m username=a\\x1b]0;x\\x07\n');
});

test("commander's usage errors exit 2, as the commands' own checks of arguments do; help and --version exit 0", async () => {
  for (const [args, message] of [
    [['accounts', 'create'], /required option '--name <name>' not specified/],
    [['serve', '--bogus'], /unknown option '--bogus'/],
    [['migrate', '--to'], /option '--to <migration>' argument missing/],
  ] as const) {
    const r = await runSdg([...args], { DATA_DIR: '/nonexistent-sdg-data-dir' });
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    // What is wrong, and where the usage is: not the whole usage.
    assert.deepEqual(r.stderr.trimEnd().split('\n').slice(1), ['(add --help for the usage)'], r.stderr);
    assert.match(r.stderr, /^sdg: /);
  }
  // Under --json, one JSON object, as every other failure (no hint line after it).
  for (const [args, message] of [
    [['accounts', 'create', '--json'], /required option '--name <name>' not specified/],
    [['worker', '--json', '--bogus'], /unknown option '--bogus'/],
    [['migrate', '--json', '--to'], /option '--to <migration>' argument missing/],
  ] as const) {
    const j = await runSdg([...args], { DATA_DIR: '/nonexistent-sdg-data-dir' });
    assert.equal(j.code, 2, `${args.join(' ')}: ${j.stderr}`);
    const parsed = JSON.parse(j.stderr) as { error: { code: string; message: string }; exitCode: number };
    assert.equal(parsed.error.code, 'usage');
    assert.match(parsed.error.message, message);
    assert.equal(parsed.exitCode, 2);
  }
  const help = await runSdg(['accounts', '--help'], {});
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: sdg accounts/);
  const version = await runSdg(['--version'], {});
  assert.equal(version.code, 0);
  assert.equal(version.stdout, `${(JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version}\n`);
});
