// watchlist add/list/remove, crawl status, export, exports list/show/download: the bulk-export side (all free).
import { constants } from 'node:fs';
import { access, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import type { ExportRecord, WatchlistAddItem } from '../types.js';
import { contextOf, intOption, readStdin, usageError, type Context } from './context.js';
import { BatchItemsError, CliError, exitCodes } from './exit-codes.js';
import { interruptible, type Interruptible } from './interrupt.js';
import { Lines, note, printJson, say, shellWords, withBar, withExtras } from './output.js';

/** An account named on the command line or in a file, with where, to name it in an error. */
interface Named {
  value: string;
  where: string;
}

/** Names or ids from the arguments and/or a file (one a line; blank lines and # comments skipped). */
async function collect(args: string[], file: string | undefined): Promise<Named[]> {
  const all = args.map((value, i) => ({ value, where: `argument ${i + 1}` }));
  if (file) {
    let text: string;
    try {
      text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
    } catch (err) {
      throw usageError(`Cannot read --file ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
    }
    text.split(/\r?\n/).forEach((line, i) => {
      const t = line.trim();
      if (t && !t.startsWith('#')) all.push({ value: t, where: `${file === '-' ? 'stdin' : file} line ${i + 1}` });
    });
  }
  return all;
}

const NUMERIC_ID = /^[0-9]{1,19}$/;
/** As the gateway's username rule (src/http/schemas.ts, HANDLE_PATTERN), the at-sign already taken off. */
const USERNAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,252}$/;

/** The first entry that is not what the command takes, as a usage error naming where it is (the gateway would name its position in a batch). */
function checkAll(entries: Named[], ok: RegExp, what: string): void {
  const bad = entries.find((e) => !ok.test(e.value));
  if (bad) throw usageError(`${bad.where}: ${JSON.stringify(bad.value)} is not ${what}.`);
}

/**
 * A batch whose accounts did not all go in (or out) is a failure for a script: the exit code of the
 * first such item's kind (not found 6, the watchlist's limit 8, failed 1: protected, an id and a
 * name of two accounts, the data source), after the output.
 */
function partialFailure(items: Array<{ status: string }>, counts: Record<string, number>, verb: 'added' | 'removed'): void {
  const codes: Record<string, number> = { not_found: exitCodes.notFound, limit_exceeded: exitCodes.conflict, failed: exitCodes.failure };
  const first = items.find((i) => codes[i.status] !== undefined);
  if (!first) return;
  const failed = Object.entries(counts).filter(([k]) => codes[k] !== undefined);
  const n = failed.reduce((sum, [, v]) => sum + v, 0);
  throw new BatchItemsError(`${n} of ${items.length} accounts not ${verb}: ${failed.map(([k, v]) => `${v} ${k}`).join(', ')}.`, codes[first.status]!);
}

export function registerBulkCommands(program: Command): void {
  const watchlist = program.command('watchlist').description('the accounts the crawl follows for your exports');

  watchlist
    .command('add')
    .description('add accounts by username (or by id with --ids), in batches of 100, waiting for each')
    .argument('[accounts...]', 'usernames (with or without @), or ids with --ids')
    .option('-f, --file <path>', 'read accounts from a file, one a line (- for stdin)')
    .option('--ids', 'the accounts are numeric user ids')
    .action(async (args: string[], flags: { file?: string; ids?: boolean }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const named = await collect(args, flags.file);
      if (named.length === 0) throw usageError('Name at least one account, or a --file of them.');
      const accounts = named.map((e) => ({ ...e, value: flags.ids ? e.value : e.value.replace(/^@/, '') }));
      if (flags.ids) checkAll(accounts, NUMERIC_ID, 'a numeric user id (--ids)');
      else checkAll(accounts, USERNAME, 'a username: letters, digits, _ . and -');
      const items: WatchlistAddItem[] = accounts.map((a) => (flags.ids ? { socialUserId: a.value } : { username: a.value }));
      const r = await withBar(ctx.out, 'watchlist add {value}/{total} accounts', items.length, (progress) =>
        ctx.client.addAllToWatchlist(items, { onProgress: (p) => progress.update(p.done) }),
      );
      if (ctx.out.json) printJson({ counts: r.counts, items: r.items, batchIds: r.batches.map((b) => b.batchId) });
      else {
        for (const item of r.items) if (item.status !== 'added' && item.status !== 'already_present') note(`${item.username ?? item.socialUserId}: ${item.status}${item.error ? ` (${item.error})` : ''}`);
        say(`${Object.entries(r.counts).map(([k, v]) => `${v} ${k}`).join(', ')}\n`);
      }
      partialFailure(r.items, r.counts, 'added');
    });

  watchlist
    .command('list')
    .description('the watchlist, as JSON Lines with --json, else one account a line')
    .action(async (_flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const lines = new Lines();
      for await (const e of ctx.client.watchlist()) {
        if (ctx.out.json) await lines.write(e);
        else say(`${e.socialUserId}\t@${e.username}\t${e.addedAt}\n`);
      }
    });

  watchlist
    .command('remove')
    .description('remove accounts by numeric id, in batches of 100, waiting for each')
    .argument('[ids...]', 'numeric user ids')
    .option('-f, --file <path>', 'read ids from a file, one a line (- for stdin)')
    .action(async (args: string[], flags: { file?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const named = await collect(args, flags.file);
      if (named.length === 0) throw usageError('Name at least one id, or a --file of them.');
      // The gateway removes by id only (a username could name another account since).
      checkAll(named, NUMERIC_ID, 'a numeric user id (remove takes ids: `watchlist list` shows them)');
      const ids = named.map((e) => e.value);
      const counts: Record<string, number> = {};
      const items = [];
      const batchIds: string[] = [];
      for (let i = 0; i < ids.length; i += 100) {
        const { data } = await ctx.client.removeFromWatchlist(ids.slice(i, i + 100));
        batchIds.push(data.batchId);
        const done = await ctx.client.waitForBatch(data.batchId, { intervalMs: 250 });
        for (const item of done.items) {
          items.push(item);
          counts[item.status] = (counts[item.status] ?? 0) + 1;
        }
      }
      if (ctx.out.json) printJson({ counts, items, batchIds });
      else say(`${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(', ')}\n`);
      partialFailure(items, counts, 'removed');
    });

  program
    .command('crawl')
    .description('the periodic crawl')
    .command('status')
    .description("the current and last completed cycle, and when the next is due")
    .action(async (_flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.crawlStatus();
      if (ctx.out.json) return printJson(data);
      const c = data.currentCycle;
      const l = data.lastCompletedCycle;
      say(
        (c ? `running: cycle ${c.id}, ${c.percentComplete}% of ${c.accountsTargeted} accounts, ${c.tweetsIngested} tweets\n` : 'no cycle running\n') +
          (l ? `last completed: cycle ${l.id} at ${l.completedAt}, ${l.accountsCompleted} accounts, ${l.tweetsIngested} new tweets, ${l.tweetsUpdated} updated\n` : 'no cycle completed yet\n') +
          `next expected at ${data.schedule.nextExpectedAt} (every ${data.schedule.intervalHours} h)\n`,
      );
    });

  program
    .command('export')
    .description("export the watched accounts' tweets of a range of at most 24 h: generate, wait, download and verify")
    .requiredOption('--start <iso>', 'start of the range (inclusive), ISO 8601 with an offset or Z')
    .requiredOption('--end <iso>', 'end of the range (exclusive)')
    .option('-o, --output <file>', 'where to save the gzip JSON Lines file (default export-<id>.jsonl.gz)')
    .action(async (flags: { start: string; end: string; output?: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      // Before an export is made for nothing: where its file goes must be writable.
      if (flags.output !== undefined) await checkWritable(flags.output);
      // Listening before the export is asked for: a signal while it is made is acted on once its id is known.
      const stop = interruptible();
      try {
        const { data: queued } = await ctx.client.generateExport({ startDate: flags.start, endDate: flags.end });
        // An export holds what is stored when it runs: a range that ends later is not filled in afterwards.
        if (!ctx.out.json && Date.parse(queued.endDate) > Date.parse(queued.createdAt)) note(`the range ends after now (${queued.createdAt}): tweets posted later are not in this export`);
        const path = flags.output ?? `export-${queued.id}.jsonl.gz`;
        try {
          await waitFor(ctx, queued.id, stop.signal);
        } catch (error) {
          // The export exists and goes on at the gateway (a Ctrl-C included): say how to get it rather than make another.
          if (!ctx.out.json) note(`export ${queued.id} was generated; to get it when it completes: sdg-client exports download ${queued.id} --wait -o ${shellWords([path])}`);
          throw withExtras(stop.errorFor(error), { exportId: queued.id });
        }
        await download(ctx, queued.id, path, stop);
      } finally {
        stop.dispose();
      }
    });

  const exportsCmd = program.command('exports').description("the account's exports: list, show one, download one");

  exportsCmd
    .command('list', { isDefault: true })
    .description('exports, newest first, in any status (JSON Lines with --json)')
    .option('--max <n>', 'at most this many', '20')
    .action(async (flags: { max: string }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const max = intOption('--max', flags.max);
      const lines = new Lines();
      for await (const e of ctx.client.exports({ maxItems: max })) {
        if (ctx.out.json) await lines.write(e);
        else say(`${recordLine(e)}\n`);
      }
    });

  exportsCmd
    .command('show')
    .description('one export, whatever its status')
    .argument('<id>', "the export's id")
    .action(async (id: string, _flags: object, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const { data } = await ctx.client.getExport(exportId(id));
      if (ctx.out.json) return printJson(data);
      say(`${recordLine(data)}${data.error ? `\n${data.error}` : ''}\n`);
    });

  exportsCmd
    .command('download')
    .description('download a completed export and verify its size and SHA-256 (a transfer cut short resumes)')
    .argument('<id>', "the export's id")
    .option('-o, --output <file>', 'where to save the gzip JSON Lines file (default export-<id>.jsonl.gz)')
    .option('--wait', 'first wait for the export to complete (one still queued or running is otherwise a conflict, exit code 8)')
    .action(async (id: string, flags: { output?: string; wait?: boolean }, cmd: Command) => {
      const ctx = await contextOf(cmd);
      const path = flags.output ?? `export-${exportId(id)}.jsonl.gz`;
      await checkWritable(path);
      const stop = interruptible();
      try {
        if (flags.wait) await waitFor(ctx, exportId(id), stop.signal).catch((error: unknown) => Promise.reject(withExtras(stop.errorFor(error), { exportId: id })));
        await download(ctx, exportId(id), path, stop);
      } finally {
        stop.dispose();
      }
    });
}

/** A usage error (exit 2) when the file, or its part beside it, could not be written there. */
async function checkWritable(path: string): Promise<void> {
  try {
    const dir = await stat(dirname(path));
    if (!dir.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await access(dirname(path), constants.W_OK);
    const there = await stat(path).catch(() => undefined);
    if (there?.isDirectory()) throw Object.assign(new Error('a directory'), { code: 'EISDIR' });
  } catch (error) {
    throw new CliError(`Cannot write -o ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, 'output_unwritable', exitCodes.usage, { path });
  }
}

/** Waits for an export to complete (ExportError if it failed), with a progress line. */
async function waitFor(ctx: Context, id: string, signal: AbortSignal): Promise<void> {
  await withBar(ctx.out, 'export {id}: {status}', 1, (waiting) =>
    ctx.client.waitForExport(id, { signal, intervalMs: 500, onProgress: (r) => waiting.update(r.status === 'completed' ? 1 : 0, { id: r.id, status: r.status }) }),
  );
}

function exportId(id: string): string {
  if (!/^[0-9]{1,19}$/.test(id)) throw usageError(`An export's id is a number; got ${id}.`);
  return id;
}

// An export past its retention still says `completed`: its line says it is gone (its download is 404 export_expired).
const recordLine = (e: ExportRecord) =>
  [e.id, e.expiredAt ? `${e.status}, expired ${e.expiredAt} (its file is deleted)` : e.status, `${e.startDate}..${e.endDate}`, e.tweetCount === null ? '' : `${e.tweetCount} tweets`, e.sizeBytes === null ? '' : `${e.sizeBytes} bytes`, e.completedAt ?? e.createdAt].filter(Boolean).join('\t');

/**
 * Downloads and verifies a completed export, with a progress bar, and says where it went. What an
 * interrupted run left in FILE.part is gone on from, and what a failed one received is kept for the next.
 */
async function download(ctx: Context, id: string, path: string, stop: Interruptible): Promise<void> {
  const part = `${path}.part`;
  const sizeOf = () => stat(part).then((s) => s.size, () => 0);
  const earlier = await sizeOf();
  if (earlier > 0 && !ctx.out.json) note(`going on from the ${earlier} bytes in ${part}`);
  let file;
  try {
    file = await withBar(ctx.out, 'download {bar} {percentage}% | {value}/{total} bytes', 0, (bar) =>
      ctx.client.downloadExport(id, path, {
        continuePart: true,
        signal: stop.signal,
        onDownloadProgress: (p) => {
          if (p.totalBytes) bar.setTotal(p.totalBytes);
          bar.update(p.bytes);
        },
      }),
    );
  } catch (error) {
    const kept = await sizeOf();
    if (kept > 0 && !ctx.out.json) note(`${kept} bytes kept in ${part}; to go on from there: sdg-client exports download ${id} -o ${shellWords([path])}`);
    throw withExtras(stop.errorFor(error), { exportId: id });
  }
  const { data: record } = await ctx.client.getExport(id);
  if (ctx.out.json) return printJson({ export: record, file: file.path, sizeBytes: file.sizeBytes, sha256: file.sha256 });
  say(`${file.path}: ${record.tweetCount} tweets, ${file.sizeBytes} bytes, sha256 ${file.sha256} (verified)\n`);
}
