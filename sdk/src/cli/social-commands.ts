// timeline, retweeters: lists to JSON Lines (a file or stdout); profile, tweet, community, wallet: one record as JSON or text.
import type { Command } from 'commander';
import { isApiError } from '../error-codes.js';
import { NetworkError, SdgError } from '../errors.js';
import type { Paginator } from '../paginate.js';
import type { Credits, Result } from '../result.js';
import { contextOf, intOption, type Context } from './context.js';
import { creditsNote, note, printJson, say, shellWords, withBar, withExtras } from './output.js';
import { PageSink, WriteFailed } from './page-sink.js';

interface ListFlags {
  output?: string;
  max?: string;
  cursor?: string;
}

/** A list to write, and how to run the command again from a cursor: its words before `--cursor`. */
interface ListRun<T> {
  list: Paginator<T>;
  what: string;
  /** The command, its argument and the filters as given (their exact values: a cursor holds them). */
  command: string[];
  /** The username's lookup before the list (a charged call too). */
  lookup?: Credits | undefined;
}

/**
 * Writes every item of a list as JSON Lines, a page at a time, with a running count and the credits
 * on stderr. A list cut short (credits run out, the gateway unreachable, the disk full) says the
 * command that goes on from there, so the pages already paid for are not bought again; with
 * --cursor the output file is added to.
 */
async function drain<T>(ctx: Context, sink: PageSink, run: ListRun<T>, flags: ListFlags): Promise<void> {
  const { list, what } = run;
  const max = intOption('--max', flags.max);
  const charged = () => list.creditsCharged + (run.lookup?.charged ?? 0);
  const pages = () => `${list.pages} ${list.pages === 1 ? 'page' : 'pages'}${run.lookup?.charged ? ' and a lookup' : ''}`;
  // The cursor the page being written was fetched with: where to go on from if its write fails.
  let pageCursor = flags.cursor;
  try {
    await sink.begin();
    await withBar(ctx.out, `${what} {value}${max ? '/{total}' : ''} | {credits} credits`, max ?? 0, async (progress) => {
      for await (const page of list.byPage()) {
        await sink.writePage(max === undefined ? page.data.items : page.data.items.slice(0, Math.max(0, max - sink.count)));
        pageCursor = page.data.nextCursor ?? undefined;
        progress.update(sink.count, { credits: charged() });
      }
    });
  } catch (error) {
    // A write that failed: the file holds the pages before, so go on from the page that failed.
    // A page refused or out of reach: every page fetched was written, so go on from the next.
    const from = error instanceof WriteFailed ? pageCursor : error instanceof SdgError ? (list.pages > 0 ? (list.nextCursor ?? undefined) : flags.cursor) : undefined;
    // A cursor the gateway refused is not one to offer again.
    if (!(error instanceof SdgError) || isApiError(error, 'invalid_cursor') || (from === undefined && !(error instanceof WriteFailed))) throw error;
    const rest = max === undefined ? [] : ['--max', String(max - sink.count)];
    const resume = [...run.command, ...rest, ...(flags.output ? ['-o', flags.output] : []), ...(from ? ['--cursor', from] : [])];
    if (!ctx.out.json) {
      const lost = error instanceof NetworkError && error.maybeCharged ? '; the page whose answer was lost may have been charged too' : '';
      const again = from ? 'to go on from there, run' : 'to start again, run';
      note(`stopped after ${sink.count} ${what} (${pages()}, ${charged()} credits${lost}); ${again}: ${shellWords(['sdg-client', ...resume])}`);
    }
    throw withExtras(error, from ? { nextCursor: from, resume } : { resume });
  } finally {
    await sink.close();
  }
  const remaining = list.creditsRemaining ?? run.lookup?.remaining;
  const summary = { count: sink.count, pages: list.pages, creditsCharged: charged(), creditsRemaining: remaining ?? null, file: flags.output ?? null };
  if (ctx.out.json && flags.output) printJson(summary);
  else if (!ctx.out.json) note(`${sink.count} ${what} in ${pages()}${flags.output ? ` to ${flags.output}` : ''}; ${charged()} credits charged${remaining !== undefined ? `, ${remaining} left` : ''}`);
}

/** The filter options as given, to name them again in a command that goes on from a cursor. */
function given(pairs: Array<[flag: string, value: string | undefined]>): string[] {
  return pairs.flatMap(([flag, value]) => (value === undefined ? [] : [flag, value]));
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
      const ctx = await contextOf(cmd);
      const max = intOption('--max', flags.max);
      // The output is opened before the username's lookup is paid for.
      const sink = await PageSink.open(flags.output, flags.cursor !== undefined);
      let userId = user;
      let lookup: Credits | undefined;
      try {
        if (!isId(user)) {
          const found = await ctx.client.userByUsername(user.replace(/^@/, ''));
          userId = found.data.id;
          lookup = found.credits;
        }
      } catch (error) {
        await sink.close();
        throw error;
      }
      const filters = given([
        ['--start-time', flags.startTime],
        ['--end-time', flags.endTime],
        ['--since-id', flags.sinceId],
        ['--until-id', flags.untilId],
      ]);
      const list = ctx.client.userTweets(userId, { cursor: flags.cursor, startTime: flags.startTime, endTime: flags.endTime, sinceId: flags.sinceId, untilId: flags.untilId, maxItems: max });
      // The command to go on names the id, not to pay for the username's lookup again.
      await drain(ctx, sink, { list, what: 'tweets', command: ['timeline', userId, ...filters], lookup }, flags);
    });

  program
    .command('retweeters')
    .description("write a tweet's retweeters, most recent first, as JSON Lines (100 credits per page of 100)")
    .argument('<tweetId>', 'numeric tweet id')
    .option('--max <n>', 'stop after this many profiles')
    .option('--cursor <cursor>', 'go on from where an earlier run stopped (the cursor it printed); -o adds to the file')
    .option('-o, --output <file>', 'write to this file instead of stdout')
    .action(async (tweetId: string, flags: ListFlags, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const max = intOption('--max', flags.max);
      const sink = await PageSink.open(flags.output, flags.cursor !== undefined);
      const list = ctx.client.retweeters(tweetId, { cursor: flags.cursor, maxItems: max });
      await drain(ctx, sink, { list, what: 'retweeters', command: ['retweeters', tweetId] }, flags);
    });

  program
    .command('profile')
    .description('show a profile by username (100 credits)')
    .argument('<username>', 'handle, with or without @')
    .action(async (username: string, _flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
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
      const ctx = await contextOf(cmd);
      printOne(ctx, await ctx.client.tweet(id), ({ metrics: m, ...t }) => `${t.id} by ${t.authorId} at ${t.createdAt}\n${t.text}\n${m.likes} likes, ${m.retweets} retweets, ${m.replies} replies, ${m.quotes} quotes\n${t.url}\n`);
    });

  program
    .command('community')
    .description('show a community by id (100 credits)')
    .argument('<id>', 'numeric community id')
    .action(async (id: string, _flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      printOne(ctx, await ctx.client.community(id), (c) => `${c.name}, id ${c.id}, ${c.access}, ${c.memberCount} members\n${c.description ? `${c.description}\n` : ''}`);
    });

  program
    .command('wallet')
    .description("an address's native-token balance on a configured EVM chain (100 credits)")
    .argument('<address>', '0x and 40 hexadecimal digits')
    .option('--chain <name>', "a configured chain (default: the gateway's default chain)")
    .action(async (address: string, flags: { chain?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      printOne(ctx, await ctx.client.walletBalance(address, flags.chain ? { chain: flags.chain } : {}), (w) => `${w.formatted} ${w.symbol} on ${w.chain} at block ${w.blockNumber}\n`);
    });
}
