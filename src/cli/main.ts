// The operator command line `sdg` (docs/spec/contract.md, section 12). Every command reads the same DATA_DIR /
// DATABASE_URL as the server and works while it runs.
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Command, CommanderError } from 'commander';
import { createAccount, createKey, getAccount, keysPage, listAccounts, revokeAllKeys, revokeKey, updateAccount } from '../accounts/accounts-repo.js';
import { AppError } from '../errors/app-error.js';
import { createKeyWithinLimit, keyLimitOf } from '../accounts/key-limit.js';
import { ledgerIdsFor, resolveSecret } from '../wiring/secret.js';
import { registerJobCommands } from './jobs-commands.js';
import { registerCreditCommands } from './credits-commands.js';
import { registerCrawlCommands } from './crawl-commands.js';
import { registerPlansCommand } from './plans-command.js';
import { withStore } from './with-store.js';
import { loadConfig, type Config } from '../config/config.js';
import { ConfigError } from '../config/env.js';
import { getBalance, grant, ledgerPage } from '../credits/credits-repo.js';
import { backupSqlite, BackupTargetExistsError } from '../db/backup.js';
import { openStore, SQLITE_FILE } from '../db/connect.js';
import { MigrationOneWayError, migrateTo, migrateToLatest, migrationNames } from '../db/migrate.js';
import { restoreSqlite, RestoreRefusedError } from '../db/restore.js';
import { storeInUse } from '../db/store-in-use.js';
import { liveProcesses } from '../db/processes-live.js';
import { CliError, parseCount, parseListLimit, parseName, parseRateLimit, print, table } from './output.js';
import { serve } from './serve.js';
import { explainStartupError } from './startup-errors.js';
import { humanStream } from './log-format.js';
import { gatewayVersion } from './version.js';
import { DemoSource } from '../sources/demo/demo-source.js';
import { demoSample } from '../sources/demo/sample.js';

// A reader that stops early (`| head`) closes the pipe: stop quietly, as other command-line tools
// do, rather than crash on EPIPE with a stack trace (and, for a list, stop buying its pages).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

// exitOverride: commander's usage errors (a missing option, an unknown one) throw, and end with exit
// code 2 below, as our own checks of arguments do; set before the commands, which inherit it. After
// such an error, one line says where the usage is rather than printing all of it.
// Written as every other failure is: `sdg: …` (commander says `error: …`), and under --json one
// JSON object on stderr (code `usage`), with no hint line after it.
const USAGE_HINT = '(add --help for the usage)';
const jsonAsked = process.argv.slice(2).includes('--json');
const program = new Command('sdg')
  .description('Social Data Gateway operator command line')
  .showHelpAfterError(jsonAsked ? false : USAGE_HINT)
  .configureOutput({
    outputError: (text, write) => {
      const message = text.replace(/^error: /, '').trim();
      write(jsonAsked ? `${JSON.stringify({ error: { code: 'usage', message }, exitCode: 2 })}\n` : `sdg: ${message}\n`);
    },
  })
  .exitOverride();

program
  .command('serve')
  .description('serve the API (and run the worker and scheduler, per ROLES; in WORKERS processes on one port); logs are JSON lines')
  .option('--json', 'JSON log lines (the default for serve)')
  .action(async () => {
    await serve(loadConfig());
  });

program
  .command('worker')
  .description('run only the background worker: watchlist batches, exports, crawl targets; logs each job as it starts and ends')
  .option('--json', 'log as JSON lines instead of readable lines')
  .action(async (o: { json?: boolean }) => {
    await serve({ ...loadConfig(), roles: ['worker'], workers: 1 }, o.json ? {} : { logStream: humanStream() });
  });

program
  .command('scheduler')
  .description('run only the crawl scheduler (starts and completes crawl cycles) and the retention job; logs each as it starts and ends')
  .option('--json', 'log as JSON lines instead of readable lines')
  .action(async (o: { json?: boolean }) => {
    await serve({ ...loadConfig(), roles: ['scheduler'], workers: 1 }, o.json ? {} : { logStream: humanStream() });
  });

program
  .command('migrate')
  .description('bring the store schema to the latest version, or up or down to a named migration of this release')
  .option('--to <migration>', 'migrate up or down to this migration (before returning to the release it ends), instead of the latest')
  .option('--force', 'with --to on Postgres: go on though processes seem to be at work on the store (they were killed and their leases have not expired yet)')
  .option('--json', 'print JSON')
  .action(async (o: { to?: string; force?: boolean; json?: boolean }) => {
    const config = loadConfig();
    const known = migrationNames();
    if (o.to !== undefined && !known.includes(o.to)) throw new CliError(`No migration ${o.to}; this release's: ${known.join(', ')}.`);
    // Taking the schema back under a running server would leave it on a schema it does not know
    // (on Postgres, what the store shows of processes at work is checked below: processes-live.ts).
    const sqlitePath = join(config.dataDir, SQLITE_FILE);
    if (o.to !== undefined && !config.databaseUrl && storeInUse(sqlitePath)) {
      throw new CliError(`The store at ${sqlitePath} is in use: stop every process that uses DATA_DIR (the server, workers, the scheduler) before \`sdg migrate --to\` (README, "Upgrades and rollbacks").`);
    }
    const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqlitePageSize: config.sqlitePageSize, poolSize: 1 });
    try {
      if (o.to !== undefined && config.databaseUrl && !o.force) {
        const live = await liveProcesses(store.db);
        if (live.apiProcesses > 0 || live.jobsInHand > 0) {
          throw new CliError(
            `Processes are at work on this Postgres store (${live.apiProcesses} API process${live.apiProcesses === 1 ? '' : 'es'} holding credit leases, ${live.jobsInHand} job${live.jobsInHand === 1 ? '' : 's'} in a worker's hands): stop every API process, worker and scheduler before \`sdg migrate --to\` (README, "Upgrades and rollbacks"). If they are stopped (killed: their leases expire within CREDIT_LEASE_SECONDS and JOBS_LEASE_SECONDS), wait for that or pass --force.`,
            'refused',
            2,
            { ...live },
          );
        }
      }
      const results = o.to === undefined ? await migrateToLatest(store) : await migrateTo(store, o.to).catch((err: unknown) => {
        throw err instanceof MigrationOneWayError ? new CliError(err.message) : err;
      });
      const done = (direction: 'Up' | 'Down') => results.filter((r) => r.status === 'Success' && r.direction === direction).map((r) => r.migrationName);
      const applied = done('Up');
      const reverted = done('Down');
      const text = [applied.length ? `applied: ${applied.join(', ')}` : '', reverted.length ? `reverted: ${reverted.join(', ')}` : ''].filter(Boolean).join('; ');
      print(!!o.json, o.to === undefined ? { applied } : { applied, reverted }, text || 'schema is up to date');
    } finally {
      await store.close();
    }
  });

program
  .command('backup')
  .argument('<file>', 'a new file for the copy')
  .description('copy the embedded store to a new file while the server runs (on Postgres, use pg_dump)')
  .option('--json', 'print JSON')
  .action(async (file: string, o: { json?: boolean }) => {
    const config = loadConfig();
    if (config.databaseUrl) throw new CliError('sdg backup copies the embedded store; with DATABASE_URL, back up Postgres with pg_dump (README, "Backups").');
    const path = join(config.dataDir, SQLITE_FILE);
    if (!existsSync(path)) throw new CliError(`No store at ${path}: nothing to back up (is DATA_DIR right?).`);
    const target = resolve(file);
    try {
      accessSync(dirname(target), constants.W_OK);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'does not exist' : 'is not writable by this user';
      throw new CliError(`Cannot write ${target}: its directory ${dirname(target)} ${why}.`);
    }
    // Not migrated first: a backup taken before an upgrade must hold the schema as it was.
    const store = openStore({ dataDir: config.dataDir, sqlitePageSize: config.sqlitePageSize });
    try {
      const r = await backupSqlite(store.sqlite!, target);
      print(!!o.json, r, `backed up ${r.pages} pages (${r.bytes} bytes) to ${r.file}`);
    } catch (err) {
      if (err instanceof BackupTargetExistsError) throw new CliError(err.message);
      // Not a start-up error: told as what it is, about the target (a full disk, a refused write).
      const e = err as { code?: string; message?: string };
      process.stderr.write(`sdg: the backup to ${target} failed and left nothing under that name: ${e.message ?? String(err)}${e.code ? ` (${e.code})` : ''}\n`);
      process.exitCode = 1;
    } finally {
      await store.close();
    }
  });

program
  .command('restore')
  .argument('<file>', 'a backup made by sdg backup')
  .description('put a backup in place of the embedded store, with every process that uses it stopped')
  .option('--json', 'print JSON')
  .action(async (file: string, o: { json?: boolean }) => {
    const config = loadConfig();
    if (config.databaseUrl) throw new CliError('sdg restore puts back the embedded store; with DATABASE_URL, restore Postgres with pg_restore (README, "Backups").');
    const r = await restoreSqlite(config.dataDir, resolve(file)).catch((err: unknown) => {
      throw err instanceof RestoreRefusedError ? new CliError(err.message) : err;
    });
    print(!!o.json, r, `restored ${resolve(file)} as ${r.restored}${r.movedAside.length ? `; the store it replaced is at ${r.movedAside[0]}` : ''}`);
  });

/** An account as `accounts list` and `accounts update` print it. */
const accountView = (r: NonNullable<Awaited<ReturnType<typeof getAccount>>>) => ({
  accountId: r.id,
  name: r.name,
  planId: r.plan_id,
  balance: r.balance,
  rateLimitPerMinute: r.rate_limit_per_minute,
  createdAt: r.created_at,
});

const accounts = program.command('accounts').description('manage accounts');
accounts
  .command('create')
  .description('create an account with one API key')
  .requiredOption('--name <name>', 'account name')
  .option('--credits <n>', "credits to grant (default: the plan's credits)")
  .option('--plan <id>', 'plan id (default: DEFAULT_PLAN)')
  .option('--rate-limit-per-minute <n>', "override the plan's rate limit")
  .option('--json', 'print JSON')
  .action(async (o: { name: string; credits?: string; plan?: string; rateLimitPerMinute?: string; json?: boolean }) =>
    withStore(async (store, config) => {
      const name = parseName('--name', o.name, 200);
      const planId = o.plan ?? config.defaultPlanId;
      const plan = config.plans.find((p) => p.id === planId);
      if (!plan) throw new CliError(`No plan ${planId}; plans: ${config.plans.map((p) => p.id).join(', ')}.`);
      const credits = o.credits === undefined ? plan.credits : parseCount('--credits', o.credits, 0);
      const rate = o.rateLimitPerMinute === undefined ? null : parseRateLimit(o.rateLimitPerMinute, false);
      const { accountId } = await createAccount(store.db, { name, planId, rateLimitPerMinute: rate });
      if (credits > 0) await grant(store.db, accountId, credits, 'initial credits');
      const key = await createKey(store.db, accountId, 'default');
      print(!!o.json, { accountId, apiKey: key.key }, `account ${accountId} with ${credits} credits\nAPI key (shown once): ${key.key}`);
    }),
  );
accounts
  .command('list')
  .description('list accounts')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) =>
    withStore(async (store) => {
      const out = (await listAccounts(store.db)).map(accountView);
      print(
        !!o.json,
        out,
        out.length === 0
          ? '(no accounts)'
          : table(
              ['ACCOUNT', 'PLAN', 'BALANCE', 'RATE/MIN', 'CREATED', 'NAME'],
              out.map((a) => [a.accountId, a.planId, a.balance, a.rateLimitPerMinute ?? 'plan', a.createdAt, a.name]),
            ),
      );
    }),
  );

accounts
  .command('update')
  .description("change an account's plan, rate-limit override or name (credits are granted apart)")
  .argument('<accountId>')
  .option('--plan <id>', 'a plan id: its rate limit, watchlist limit and key limit apply from now on')
  .option('--rate-limit-per-minute <n>', "override the plan's rate limit, or `plan` to follow the plan's again")
  .option('--name <name>', 'account name')
  .option('--json', 'print JSON')
  .action(async (accountId: string, o: { plan?: string; rateLimitPerMinute?: string; name?: string; json?: boolean }) =>
    withStore(async (store, config) => {
      if (o.plan === undefined && o.rateLimitPerMinute === undefined && o.name === undefined) {
        throw new CliError('Nothing to change: give --plan, --rate-limit-per-minute or --name.');
      }
      const name = o.name === undefined ? undefined : parseName('--name', o.name, 200);
      if (o.plan !== undefined && !config.plans.some((p) => p.id === o.plan)) {
        throw new CliError(`No plan ${o.plan}; plans: ${config.plans.map((p) => p.id).join(', ')}.`);
      }
      const rate =
        o.rateLimitPerMinute === undefined ? undefined : o.rateLimitPerMinute === 'plan' ? null : parseRateLimit(o.rateLimitPerMinute, true);
      const r = await updateAccount(store.db, accountId, { name, planId: o.plan, rateLimitPerMinute: rate });
      if (!r) throw new CliError(`No account ${accountId}.`);
      const plan = config.plans.find((p) => p.id === r.plan_id);
      const out = accountView(r);
      const limit = r.rate_limit_per_minute === null ? `${plan?.rateLimitPerMinute ?? '?'} a minute (the plan's)` : `${r.rate_limit_per_minute} a minute (this account's own)`;
      print(!!o.json, out, `${r.id}: plan ${r.plan_id}, rate limit ${limit}, balance ${r.balance}, name ${r.name}`);
    }),
  );

registerCreditCommands(program);

const keys = program.command('keys').description('manage API keys');
keys
  .command('list')
  .description("an account's API keys, newest first (never the secrets)")
  .argument('<accountId>')
  .option('--limit <n>', 'at most this many', '100')
  .option('--json', 'print JSON')
  .action(async (accountId: string, o: { limit: string; json?: boolean }) =>
    withStore(async (store) => {
      const limit = parseListLimit(o.limit);
      if (!(await getAccount(store.db, accountId))) throw new CliError(`No account ${accountId}.`);
      const rows = (await keysPage(store.db, accountId, limit)).slice(0, limit);
      print(
        !!o.json,
        rows,
        rows.length === 0 ? '(no keys)' : table(['KEY', 'PREFIX', 'CREATED', 'REVOKED', 'NAME'], rows.map((k) => [k.id, k.prefix, k.createdAt, k.revokedAt, k.name])),
      );
    }),
  );
keys
  .command('create')
  .description("create an API key for an account (within its plan's key limit); the secret is shown once")
  .argument('<accountId>')
  .option('--name <name>', 'a label for the key')
  .option('--json', 'print JSON')
  .action(async (accountId: string, o: { name?: string; json?: boolean }) =>
    withStore(async (store, config) => {
      const name = o.name === undefined ? null : parseName('--name', o.name, 100);
      const acc = await getAccount(store.db, accountId);
      if (!acc) throw new CliError(`No account ${accountId}.`);
      let k;
      try {
        k = await createKeyWithinLimit(store.db, accountId, name, keyLimitOf(config, acc.plan_id));
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        throw new CliError(err.message.replace('(DELETE /api/v1/api-keys/{id})', '(sdg keys revoke KEY_ID)'));
      }
      // `id` as `keys list` and the API name it; `keyId` kept for scripts written against it.
      print(!!o.json, { id: k.id, keyId: k.id, apiKey: k.key, prefix: k.prefix, name: k.name, createdAt: k.createdAt }, `key ${k.id} for ${accountId}\nAPI key (shown once): ${k.key}`);
    }),
  );
keys
  .command('revoke')
  .description('revoke an API key by its id (key_…)')
  .argument('<keyId>')
  .option('--json', 'print JSON')
  .action(async (keyId: string, o: { json?: boolean }) =>
    withStore(async (store) => {
      const before = await store.db.selectFrom('api_keys').select('revoked_at').where('id', '=', keyId).executeTakeFirst();
      const k = await revokeKey(store.db, keyId);
      if (!before || !k) throw new CliError(`No API key ${keyId}.`);
      // Revoking twice changes nothing, and says so rather than claiming it did it now.
      const already = before.revoked_at !== null;
      print(!!o.json, { id: k.id, keyId: k.id, revokedAt: k.revokedAt, alreadyRevoked: already }, already ? `${k.id} was already revoked at ${k.revokedAt}` : `revoked ${k.id}`);
    }),
  );
keys
  .command('revoke-all')
  .description("revoke every active key of an account: its calls are refused until `sdg keys create` makes a new one")
  .argument('<accountId>')
  .option('--json', 'print JSON')
  .action(async (accountId: string, o: { json?: boolean }) =>
    withStore(async (store) => {
      if (!(await getAccount(store.db, accountId))) throw new CliError(`No account ${accountId}.`);
      const r = await revokeAllKeys(store.db, accountId);
      // Nothing revoked: no time of revocation to give.
      print(!!o.json, { accountId, revoked: r.ids, revokedAt: r.ids.length === 0 ? null : r.revokedAt }, r.ids.length === 0 ? `${accountId} had no active key` : `revoked ${r.ids.length} key(s) of ${accountId}: ${r.ids.join(', ')}`);
    }),
  );

program
  .command('usage')
  .description("an account's ledger (grants, charges and refunds), newest first, with the same opaque ids as GET /api/v1/usage")
  .argument('<accountId>')
  .option('--limit <n>', 'at most this many entries', '20')
  .option('--json', 'print JSON')
  .action(async (accountId: string, o: { limit: string; json?: boolean }) =>
    withStore(async (store, config) => {
      const limit = parseListLimit(o.limit);
      const ids = await ledgerIdsFor(store, await resolveSecret(store, config.secret));
      // The balance and the entries from one snapshot, so that under load the newest entry's balance
      // after is the balance shown (two reads apart, calls charged between them told two stories).
      const trx = store.dialect === 'postgres' ? store.db.transaction().setIsolationLevel('repeatable read') : store.db.transaction();
      const [balance, rows] = await trx.execute(async (t) => [await getBalance(t, accountId), (await ledgerPage(t, accountId, limit)).slice(0, limit)] as const);
      if (!balance) throw new CliError(`No account ${accountId}.`);
      const entries = rows.map((r) => ({
        id: ids.encode(r.id),
        kind: r.kind,
        amount: r.amount,
        balanceAfter: r.balance_after,
        endpoint: r.endpoint,
        requestId: r.request_id,
        keyId: r.key_id,
        note: r.note,
        createdAt: r.created_at,
      }));
      print(
        !!o.json,
        { accountId, balance: balance.balance, entries },
        `${accountId} balance: ${balance.balance}\n` +
          (entries.length === 0
            ? '(no ledger entries)'
            : table(['ID', 'CREATED', 'KIND', 'AMOUNT', 'BALANCE', 'ENDPOINT', 'REQUEST', 'NOTE'], entries.map((e) => [e.id, e.createdAt, e.kind, e.amount, e.balanceAfter, e.endpoint, e.requestId, e.note]))),
      );
    }),
  );

registerJobCommands(program);
registerCrawlCommands(program);
registerPlansCommand(program);

const demo = program.command('demo').description('the built-in demo network (simulated data)');
demo
  .command('sample')
  .description('ids that exist in the demo network, for trying the API')
  .option('--json', 'print JSON')
  .action((o: { json?: boolean }) => {
    const config = loadConfig();
    const source = new DemoSource({ seed: config.source.demo.seed, userCount: config.source.demo.userCount });
    const sample = demoSample(source, new Date());
    print(!!o.json, sample, Object.entries(sample).map(([k, v]) => `${k}: ${(v as string[]).join(' ')}`).join('\n'));
  });

program.version(gatewayVersion(), '--version', 'print the version of this release');

try {
  await program.parseAsync(process.argv);
} catch (err) {
  // Commander has printed its message (or the help, exit code 0) already.
  if (err instanceof CommanderError) process.exit(err.exitCode === 0 ? 0 : 2);
  // Under --json a failure is one JSON object on stderr, as sdg-client writes it, so a script reads
  // it the way it reads the answer (commander's own usage errors too: outputError above).
  const asJson = jsonAsked;
  const fail = (code: string, message: string, exitCode: number, details?: Record<string, unknown>): never => {
    process.stderr.write(asJson ? `${JSON.stringify({ error: { code, message, ...(details ? { details } : {}) }, exitCode })}\n` : `sdg: ${message}\n`);
    process.exit(exitCode);
  };
  if (err instanceof ConfigError) fail('config', err.message, 2);
  if (err instanceof CliError) fail(err.code, err.message, err.exitCode, err.details);
  let config: Config | undefined;
  try {
    config = loadConfig();
  } catch {
    config = undefined;
  }
  const explained = explainStartupError(err, config);
  if (explained) fail('startup', explained, 1);
  throw err;
}
