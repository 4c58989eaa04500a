// The operator command line `sdg` (docs/spec/contract.md, section 12). Every command reads the same DATA_DIR /
// DATABASE_URL as the server and works while it runs.
import { Command, Option } from 'commander';
import { createAccount, createKey, listAccounts, revokeKey } from '../accounts/accounts-repo.js';
import { loadConfig, type Config } from '../config/config.js';
import { ConfigError } from '../config/env.js';
import { getBalance, grant } from '../credits/credits-repo.js';
import { openStore, type Store } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { CliError, parsePositiveInt, print } from './output.js';
import { serve } from './serve.js';
import { explainStartupError } from './startup-errors.js';
import { DemoSource } from '../sources/demo/demo-source.js';
import { demoSample } from '../sources/demo/sample.js';

async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2 });
  try {
    await migrateToLatest(store);
    return await fn(store, config);
  } finally {
    await store.close();
  }
}

const program = new Command('sdg').description('Social Data Gateway operator command line').showHelpAfterError();

program.command('serve').description('serve the API (and run the worker and scheduler, per ROLES)').action(async () => {
  await serve(loadConfig());
});

program
  .command('worker')
  .description('run only the background worker: watchlist batches, exports, crawl targets')
  .action(async () => {
    await serve({ ...loadConfig(), roles: ['worker'] });
  });

program
  .command('scheduler')
  .description('run only the crawl scheduler (starts and completes crawl cycles)')
  .action(async () => {
    await serve({ ...loadConfig(), roles: ['scheduler'] });
  });

program
  .command('migrate')
  .description('bring the store schema to the latest version')
  .option('--json', 'print JSON')
  .action(async (o: { json?: boolean }) => {
    const config = loadConfig();
    const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 1 });
    try {
      const results = await migrateToLatest(store);
      const applied = results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
      print(!!o.json, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'schema is up to date');
    } finally {
      await store.close();
    }
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
      const planId = o.plan ?? config.defaultPlanId;
      const plan = config.plans.find((p) => p.id === planId);
      if (!plan) throw new CliError(`No plan ${planId}; plans: ${config.plans.map((p) => p.id).join(', ')}.`);
      const credits = o.credits === undefined ? plan.credits : Number(o.credits);
      if (!Number.isSafeInteger(credits) || credits < 0) throw new CliError(`--credits must be a non-negative integer; got ${o.credits}.`);
      const rate = o.rateLimitPerMinute === undefined ? null : parsePositiveInt('--rate-limit-per-minute', o.rateLimitPerMinute);
      const { accountId } = await createAccount(store.db, { name: o.name, planId, rateLimitPerMinute: rate });
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
      const rows = await listAccounts(store.db);
      const out = rows.map((r) => ({ accountId: r.id, name: r.name, planId: r.plan_id, balance: r.balance, createdAt: r.created_at }));
      print(!!o.json, out, out.map((a) => `${a.accountId}\t${a.planId}\t${a.balance}\t${a.name}`).join('\n') || '(no accounts)');
    }),
  );

const credits = program.command('credits').description('manage credits');
credits
  .command('grant')
  .description('grant credits to an account')
  .argument('<accountId>')
  .argument('<credits>')
  .option('--note <text>', 'ledger note', 'granted by operator')
  .option('--json', 'print JSON')
  .action(async (accountId: string, amount: string, o: { note: string; json?: boolean }) =>
    withStore(async (store) => {
      const n = parsePositiveInt('credits', amount);
      if (!(await getBalance(store.db, accountId))) throw new CliError(`No account ${accountId}.`);
      const balance = await grant(store.db, accountId, n, o.note);
      print(!!o.json, { accountId, balance }, `${accountId} balance: ${balance}`);
    }),
  );

const keys = program.command('keys').description('manage API keys');
keys
  .command('revoke')
  .description('revoke an API key by its id (key_…)')
  .argument('<keyId>')
  .option('--json', 'print JSON')
  .action(async (keyId: string, o: { json?: boolean }) =>
    withStore(async (store) => {
      const k = await revokeKey(store.db, keyId);
      if (!k) throw new CliError(`No API key ${keyId}.`);
      print(!!o.json, { keyId: k.id, revokedAt: k.revokedAt }, `revoked ${k.id}`);
    }),
  );

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

program.addOption(new Option('--version').hideHelp());

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof ConfigError || err instanceof CliError) {
    process.stderr.write(`sdg: ${err.message}\n`);
    process.exit(2);
  }
  let config: Config | undefined;
  try {
    config = loadConfig();
  } catch {
    config = undefined;
  }
  const explained = explainStartupError(err, config);
  if (explained) {
    process.stderr.write(`sdg: ${explained}\n`);
    process.exit(1);
  }
  throw err;
}
