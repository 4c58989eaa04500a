// `sdg plans`: the plans this deployment offers (PLANS_FILE, or the defaults) and how many accounts
// each holds, for choosing `--plan` and for checking a new PLANS_FILE: accounts whose plan it no
// longer has are listed too (the default plan's limits apply to them).
import type { Command } from 'commander';
import { keyLimitOf } from '../accounts/key-limit.js';
import { table, print } from './output.js';
import { withStore } from './with-store.js';

export function registerPlansCommand(program: Command): void {
  program
    .command('plans')
    .description('the plans (PLANS_FILE or the defaults) and how many accounts are on each')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) =>
      withStore(async (store, config) => {
        const counts = await store.db.selectFrom('accounts').select((eb) => ['plan_id', eb.fn.countAll<string | number>().as('n')]).groupBy('plan_id').execute();
        const accounts = new Map(counts.map((c) => [c.plan_id, Number(c.n)]));
        const rows = config.plans.map((p) => ({ ...p, keyLimit: keyLimitOf(config, p.id), default: p.id === config.defaultPlanId, accounts: accounts.get(p.id) ?? 0 }));
        const unknown = counts.filter((c) => !config.plans.some((p) => p.id === c.plan_id)).map((c) => ({ id: c.plan_id, accounts: Number(c.n) }));
        const lines = [
          table(
            ['ID', 'NAME', 'PRICE', 'CREDITS', 'WATCHLIST', 'RATE/MIN', 'KEYS', 'ACCOUNTS', 'DEFAULT'],
            rows.map((p) => [p.id, p.name, `${(p.priceCents / 100).toFixed(2)} ${p.currency}`, p.credits, p.watchlistLimit, p.rateLimitPerMinute, p.keyLimit, p.accounts, p.default ? 'yes' : '']),
          ),
          ...unknown.map((u) => `${u.accounts} account(s) on plan ${u.id}, which this deployment's plans do not have: the default plan (${config.defaultPlanId}) applies to them.`),
        ];
        print(!!o.json, { plans: rows, unknownPlans: unknown }, lines.join('\n'));
      }),
    );
}
