// timeline, retweeters: lists to JSON Lines (a file or stdout); profile, tweet, community, wallet: one record as JSON or text.
import type { Command } from 'commander';
import { SdgError } from '../errors.js';
import type { Paginator } from '../paginate.js';
import type { Credits, Result } from '../result.js';
import { contextOf, intOption, type Context } from './context.js';
import { creditsNote, Lines, note, printJson, say, withBar, withNextCursor } from './output.js';

interface ListFlags {
  output?: string;
  max?: string;
  cursor?: string;
}

/**
 * Writes every item of a list as JSON Lines, with a running count and the credits on stderr. A list
 * cut short by an error (credits run out, the gateway unreachable) says the cursor to continue
 * from, so the pages already paid for are not bought again; with --cursor the output file is added to.
 */
async function drain<T>(ctx: Context, list: Paginator<T>, flags: ListFlags, what: string, opts: { instead?: string; lookup?: Credits } = {}): Promise<void> {
  const lines = new Lines(flags.output, flags.cursor !== undefined);
  const max = intOption('--max', flags.max);
  // What the command cost: the pages, and the username's lookup before them (a charged call too).
  const charged = () => list.creditsCharged + (opts.lookup?.charged ?? 0);
  const pages = () => `${list.pages} ${list.pages === 1 ? 'page' : 'pages'}${opts.lookup?.charged ? ' and a lookup' : ''}`;
  try {
    await withBar(ctx.out, `${what} {value}${max ? '/{total}' : ''} | {credits} credits`, max ?? 0, async (progress) => {
      for await (const item of list) {
        await lines.write(item);
        progress.update(lines.count, { credits: charged() });
      }
    });
  } catch (error) {
    // A page refused or out of reach (not a failed write): every item of the pages fetched was
    // written, and the next page is where to go on.
    const from = error instanceof SdgError ? (list.pages > 0 ? list.nextCursor : flags.cursor) : undefined;
    if (from) {
      if (!ctx.out.json) note(`stopped after ${lines.count} ${what} (${pages()}, ${charged()} credits); to go on from there, run the same command${opts.instead ? ` (${opts.instead})` : ''} with --cursor ${from}`);
      throw withNextCursor(error, from);
    }
    throw error;
  } finally {
    await lines.close();
  }
  const remaining = list.creditsRemaining ?? opts.lookup?.remaining;
  const summary = { count: lines.count, pages: list.pages, creditsCharged: charged(), creditsRemaining: remaining ?? null, file: flags.output ?? null };
  if (ctx.out.json && flags.output) printJson(summary);
  else if (!ctx.out.json) note(`${lines.count} ${what} in ${pages()}${flags.output ? ` to ${flags.output}` : ''}; ${charged()} credits charged${remaining !== undefined ? `, ${remaining} left` : ''}`);
}

/** One record: its JSON under --json, else its text and the credits on stderr. */
function printOne<T>(ctx: Context, r: Result<T>, text: (data: T) => string): void {
  if (ctx.out.json) return printJson(r.data);
  say(text(r.data));
  creditsNote(ctx.out, r.credits);
}

const isId = (s: string) => /^[0-9]{1,19}$/.test(s);

export function registerSocialCommands(program: Command): void {
  program
    .command('timeline')
    .description("write a user's tweets, newest first, as JSON Lines (100 credits per page of 100)")
    .argument('<user>', 'numeric user id, or @username (looked up first: 100 credits)')
    .option('--start-time <iso>', 'tweets created at or after this instant')
    .option('--end-time <iso>', 'tweets created before this instant')
    .option('--since-id <id>', 'tweets with a greater id')
    .option('--until-id <id>', 'tweets with a smaller id')
    .option('--max <n>', 'stop after this many tweets')
    .option('--cursor <cursor>', 'go on from where an earlier run stopped (the cursor it printed); -o adds to the file')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (user: string, flags: ListFlags & { startTime?: string; endTime?: string; sinceId?: string; untilId?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      let userId = user;
      let lookup: Credits | undefined;
      if (!isId(user)) {
        const found = await ctx.client.userByUsername(user.replace(/^@/, ''));
        userId = found.data.id;
        lookup = found.credits;
      }
      const max = intOption('--max', flags.max);
      const list = ctx.client.userTweets(userId, {
        cursor: flags.cursor,
        startTime: flags.startTime,
        endTime: flags.endTime,
        sinceId: flags.sinceId,
        untilId: flags.untilId,
        maxItems: max,
      });
      // The username's lookup costs credits again: the hint names the id instead.
      await drain(ctx, list, flags, 'tweets', { lookup, ...(userId === user ? {} : { instead: `with ${userId} for ${user}, not to pay for its lookup again` }) });
    });

  program
    .command('retweeters')
    .description("write a tweet's retweeters, most recent first, as JSON Lines (100 credits per page of 100)")
    .argument('<tweetId>', 'numeric tweet id')
    .option('--max <n>', 'stop after this many profiles')
    .option('--cursor <cursor>', 'go on from where an earlier run stopped (the cursor it printed); -o adds to the file')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (tweetId: string, flags: ListFlags, cmd: Command) => {
      const ctx = contextOf(cmd);
      const max = intOption('--max', flags.max);
      const list = ctx.client.retweeters(tweetId, { cursor: flags.cursor, maxItems: max });
      await drain(ctx, list, flags, 'retweeters');
    });

  program
    .command('profile')
    .description('show a profile by username (100 credits)')
    .argument('<username>', 'handle, with or without @')
    .action(async (username: string, _flags: object, cmd: Command) => {
      const ctx = contextOf(cmd);
      printOne(
        ctx,
        await ctx.client.userByUsername(username.replace(/^@/, '')),
        (p) =>
          `@${p.username} (${p.name}), id ${p.id}${p.protected ? ', protected' : ''}\n` +
          `${p.metrics.followers} followers, ${p.metrics.following} following, ${p.metrics.tweets} tweets\n` +
          (p.description ? `${p.description}\n` : ''),
      );
    });

  program
    .command('tweet')
    .description('show a tweet by id (100 credits)')
    .argument('<id>', 'numeric tweet id')
    .action(async (id: string, _flags: object, cmd: Command) => {
      const ctx = contextOf(cmd);
      printOne(ctx, await ctx.client.tweet(id), ({ metrics: m, ...t }) => `${t.id} by ${t.authorId} at ${t.createdAt}\n${t.text}\n${m.likes} likes, ${m.retweets} retweets, ${m.replies} replies, ${m.quotes} quotes\n${t.url}\n`);
    });

  program
    .command('community')
    .description('show a community by id (100 credits)')
    .argument('<id>', 'numeric community id')
    .action(async (id: string, _flags: object, cmd: Command) => {
      const ctx = contextOf(cmd);
      printOne(ctx, await ctx.client.community(id), (c) => `${c.name}, id ${c.id}, ${c.access}, ${c.memberCount} members\n${c.description ? `${c.description}\n` : ''}`);
    });

  program
    .command('wallet')
    .description("an address's native-token balance on a configured EVM chain (100 credits)")
    .argument('<address>', '0x and 40 hexadecimal digits')
    .option('--chain <name>', "a configured chain (default: the gateway's default chain)")
    .action(async (address: string, flags: { chain?: string }, cmd: Command) => {
      const ctx = contextOf(cmd);
      printOne(ctx, await ctx.client.walletBalance(address, flags.chain ? { chain: flags.chain } : {}), (w) => `${w.formatted} ${w.symbol} on ${w.chain} at block ${w.blockNumber}\n`);
    });
}
