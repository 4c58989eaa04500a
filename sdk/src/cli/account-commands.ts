// balance, usage, plans, keys list/create/revoke: the account (all free).
import type { Command } from 'commander';
import type { QueryOf } from '../types.js';
import { contextOf, intOption, usageError, type Context } from './context.js';
import { CliError, exitCodes } from './exit-codes.js';
import { Lines, printJson, say } from './output.js';

/**
 * The answer to `keys create` was lost and its retry replayed (same Idempotency-Key): the key exists
 * but its secret, given once, never arrived. A key nobody holds is only a standing credential, so it
 * is revoked here; the error says so (or, if that fails too, how to revoke it).
 */
async function secretLost(ctx: Context, id: string): Promise<CliError> {
  const lost = `Key ${id} was created but its secret was lost on the way (the answer was replayed without it, as the gateway never keeps a secret)`;
  try {
    await ctx.client.revokeKey(id);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return new CliError(`${lost}, and revoking it failed (${why}): revoke it with \`sdg-client keys revoke ${id}\`, then create another.`, 'key_secret_lost', exitCodes.keyLost, { keyId: id, revoked: false });
  }
  return new CliError(`${lost}; it has been revoked. Run \`sdg-client keys create\` again.`, 'key_secret_lost', exitCodes.keyLost, { keyId: id, revoked: true });
}

export function registerAccountCommands(program: Command): void {
  program
    .command('balance')
    .description("the account's credit balance")
    .action(async (_flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.balance();
      if (ctx.out.json) return printJson(data);
      say(`${data.balance} credits (account ${data.accountId})\n`);
    });

  program
    .command('account')
    .description('the calling account: plan, rate limit and balance')
    .action(async (_flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.account();
      if (ctx.out.json) return printJson(data);
      say(`${data.name} (${data.id}): plan ${data.planName ?? data.planId}, ${data.rateLimitPerMinute} requests a minute, ${data.balance} credits\n`);
    });

  program
    .command('usage')
    .description("the account's ledger of grants and charges, newest first (JSON Lines with --json); --summary for totals per endpoint")
    .option('--max <n>', 'at most this many entries', '20')
    .option('--summary', 'calls and credits per endpoint over --from..--to instead of the ledger')
    .option('--from <iso>', 'with --summary: start (default 24 hours ago)')
    .option('--to <iso>', 'with --summary: end (default now)')
    .option('--granularity <unit>', 'with --summary: hour or day', 'hour')
    .option('--endpoint <operation>', 'without --summary: only the charges of this operation (getTweet, getUserTweets…)')
    .action(async (flags: { max: string; summary?: boolean; from?: string; to?: string; granularity: string; endpoint?: string }, cmd: Command) => {
      // An option of the other form would be ignored: a script asking for a day's ledger would get the newest entries.
      const given = (name: string) => cmd.getOptionValueSource(name) === 'cli';
      const misplaced = flags.summary ? ['endpoint'].filter(given) : ['from', 'to', 'granularity'].filter(given);
      if (misplaced.length) throw usageError(`--${misplaced[0]} ${flags.summary ? 'lists the ledger: it does not go with --summary' : 'goes with --summary'}.`);
      const ctx = await contextOf(cmd);
      if (flags.summary) {
        if (flags.granularity !== 'hour' && flags.granularity !== 'day') throw usageError('--granularity is hour or day.');
        const to = flags.to ?? new Date().toISOString();
        const from = flags.from ?? new Date(Date.parse(to) - 24 * 3_600_000).toISOString();
        const { data } = await ctx.client.usageSummary({ from, to, granularity: flags.granularity });
        if (ctx.out.json) return printJson(data);
        say(`${data.calls} charged calls, ${data.credits} credits from ${data.from} to ${data.to}\n`);
        for (const e of data.endpoints) say(`${e.endpoint}\t${e.calls} calls\t${e.credits} credits\n`);
        return;
      }
      const max = intOption('--max', flags.max);
      const lines = new Lines();
      for await (const e of ctx.client.usage({ maxItems: max, limit: 100, ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint as NonNullable<QueryOf<'listUsage'>['endpoint']> }) })) {
        if (ctx.out.json) await lines.write(e);
        else say(`${e.createdAt}\t${e.amount > 0 ? '+' : ''}${e.amount}\t${e.balanceAfter}\t${e.kind === 'refund' ? `refund of ${e.requestId ?? '?'} ` : ''}${e.endpoint ?? e.note ?? e.kind}\n`);
      }
    });

  program
    .command('plans')
    .description('the plans on offer')
    .action(async (_flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.plans();
      if (ctx.out.json) return printJson(data);
      for (const p of data.plans) say(`${p.id}\t${p.name}\t${p.credits} credits\t${p.rateLimitPerMinute}/min\twatchlist ${p.watchlistLimit}\n`);
    });

  const keys = program.command('keys').description("the account's API keys");
  keys
    .command('list', { isDefault: true })
    .description('the keys, never their secrets (JSON Lines with --json, as every list)')
    .option('--status <status>', 'active or revoked: those keys only')
    .action(async (flags: { status?: string }, cmd: Command) => {
      if (flags.status !== undefined && flags.status !== 'active' && flags.status !== 'revoked') throw usageError('--status is active or revoked.');
      const ctx = await contextOf(cmd);
      const lines = new Lines();
      for await (const k of ctx.client.keys(flags.status ? { status: flags.status } : {})) {
        if (ctx.out.json) await lines.write(k);
        else say(`${k.id}\t${k.prefix}…\t${k.name ?? ''}\t${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}\n`);
      }
    });
  keys
    .command('create')
    .description('a new key; its secret is printed once')
    .option('--name <name>', 'a label for the key')
    .action(async (flags: { name?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const created = await ctx.client.createKey({ name: flags.name });
      if (created.data.key === null) throw await secretLost(ctx, created.data.id);
      if (ctx.out.json) return printJson(created.data);
      say(`${created.data.key}\n`);
    });
  keys
    .command('revoke')
    .description('revoke a key by id; it stops working at once')
    .argument('<id>', 'the key id (from keys list)')
    .action(async (id: string, _flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.revokeKey(id);
      if (ctx.out.json) return printJson(data);
      say(`revoked ${data.id}\n`);
    });
}
