// `sdg credits grant|deduct|refund`: an account's credits, each change with its ledger entry.
import type { Command } from 'commander';
import { deduct, DEDUCT_WAIT_MS, getBalance, grant } from '../credits/credits-repo.js';
import type { Store } from '../db/connect.js';
import { AppError } from '../errors/app-error.js';
import { CliError, parseName, parsePositiveInt, print } from './output.js';
import { withStore } from './with-store.js';
import { refundCharge } from '../credits/refunds.js';

/** A grant's or deduction's arguments: the credits, an account that exists, and the note, which is shown in the account's usage (API, dashboard, both command lines), so a label's rules. */
async function change(store: Store, accountId: string, amount: string, note: string): Promise<{ n: number; note: string }> {
  const n = parsePositiveInt('credits', amount);
  if (!(await getBalance(store.db, accountId))) throw new CliError(`No account ${accountId}.`);
  return { n, note: parseName('--note', note, 200) };
}

export function registerCreditCommands(program: Command): void {
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
        const { n, note } = await change(store, accountId, amount, o.note);
        const balance = await grant(store.db, accountId, n, note).catch((err: unknown) => {
          throw err instanceof AppError ? new CliError(err.message) : err;
        });
        print(!!o.json, { accountId, balance }, `${accountId} balance: ${balance}`);
      }),
    );

  credits
    .command('deduct')
    .description("take credits back from an account (a grant's correction): a ledger entry of kind grant with a negative amount")
    .argument('<accountId>')
    .argument('<credits>')
    .option('--note <text>', 'ledger note', 'deducted by operator')
    .option('--json', 'print JSON')
    .action(async (accountId: string, amount: string, o: { note: string; json?: boolean }) =>
      withStore(async (store, config) => {
        const { n, note } = await change(store, accountId, amount, o.note);
        const leaseSeconds = config.credits.leaseSeconds;
        const r = await deduct(store, accountId, n, note);
        if (!('balance' in r)) {
          const held = r.leased === 0 ? '' : r.waited ? ` (${r.leased} more are leased to API processes for calls, and were not given back in ${DEDUCT_WAIT_MS / 1000} s; a process that was killed gives them back when its lease expires, within ${leaseSeconds} s, CREDIT_LEASE_SECONDS)` : ` (${r.leased} more are leased to API processes for calls)`;
          throw new CliError(`Only ${r.available} credits can be deducted from ${accountId} now${held}; nothing was deducted.`, 'insufficient_credits', 3, { available: r.available, leased: r.leased });
        }
        print(!!o.json, { accountId, balance: r.balance }, `${accountId} balance: ${r.balance}`);
      }),
    );

  credits
    .command('refund')
    .description('refund the charge of one call by its request id (a call answered 503 with details.maybeCharged, which its API process stopped before settling: its warn log names the account and request id); does nothing if the call was not charged or is refunded already')
    .argument('<accountId>')
    .argument('<requestId>')
    .option('--note <text>', 'ledger note', 'refunded by operator')
    .option('--json', 'print JSON')
    .action(async (accountId: string, requestId: string, o: { note: string; json?: boolean }) =>
      withStore(async (store) => {
        if (!(await getBalance(store.db, accountId))) throw new CliError(`No account ${accountId}.`);
        const note = parseName('--note', o.note, 200);
        const r = await refundCharge(store.db, { accountId, requestId: parseName('requestId', requestId, 200) }, note);
        const text =
          r.outcome === 'refunded'
            ? `${accountId}: refunded ${r.amount} credits charged for ${requestId}; balance: ${r.balance}`
            : r.outcome === 'already_refunded'
              ? `${accountId}: the charge for ${requestId} is refunded already; nothing done`
              : `${accountId}: no charge for ${requestId}; nothing done`;
        print(!!o.json, { accountId, requestId, ...r }, text);
      }),
    );
}
