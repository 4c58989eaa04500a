// `sdg jobs show|list`: background jobs (watchlist batches, exports, crawl cycles) of every account.
import type { Command } from 'commander';
import { getAccount } from '../accounts/accounts-repo.js';
import { JOB_KINDS, JOB_STATUSES, listJobs, type JobKind } from './jobs-list.js';
import { findJob } from './jobs-show.js';
import { CliError, parsePositiveInt, print, table } from './output.js';
import { withStore } from './with-store.js';

export function registerJobCommands(program: Command): void {
  const jobs = program.command('jobs').description('background jobs: watchlist batches, exports, crawl cycles');
  jobs
    .command('show')
    .description('one job by id: a batch (wlb_…), an export (numeric), a crawl cycle (cyc_…) or a cycle target (cyc_…:USER_ID)')
    .argument('<id>')
    .option('--json', 'print JSON')
    .action(async (id: string, o: { json?: boolean }) =>
      withStore(async (store) => {
        const job = await findJob(store.db, id);
        if (!job) throw new CliError(`No job ${id}: not a watchlist batch, export, crawl cycle or crawl target of this store.`);
        print(!!o.json, job, table(['FIELD', 'VALUE'], Object.entries(job).map(([k, v]) => [k, v === null || typeof v !== 'object' ? (v as string | number | null) : JSON.stringify(v)])));
      }),
    );

  jobs
    .command('list')
    .description('the newest background jobs of every account, newest first: watchlist batches, exports, crawl cycles')
    .option('--kind <kind>', `only this kind: ${JOB_KINDS.join(', ')}`)
    .option('--status <status>', 'only this status (failed, queued, running, processing, completed)')
    .option('--account <accountId>', "only this account's batches and exports")
    .option('--limit <n>', 'at most this many', '20')
    .option('--json', 'print JSON')
    .action(async (o: { kind?: string; status?: string; account?: string; limit: string; json?: boolean }) =>
      withStore(async (store) => {
        const limit = parsePositiveInt('--limit', o.limit);
        if (limit > 1_000) throw new CliError('--limit must be at most 1000.');
        if (o.kind !== undefined && !JOB_KINDS.includes(o.kind as JobKind)) throw new CliError(`--kind must be one of ${JOB_KINDS.join(', ')}.`);
        const kinds = o.kind === undefined ? JOB_KINDS : [o.kind as JobKind];
        if (o.status !== undefined && !kinds.some((k) => JOB_STATUSES[k].includes(o.status!))) {
          throw new CliError(`--status must be one of ${[...new Set(kinds.flatMap((k) => JOB_STATUSES[k]))].join(', ')}${o.kind ? ` for --kind ${o.kind}` : ''}.`);
        }
        if (o.account !== undefined && o.kind === 'cycle') throw new CliError('A crawl cycle belongs to no account: --account lists batches and exports.');
        if (o.account !== undefined && !(await getAccount(store.db, o.account))) throw new CliError(`No account ${o.account}.`);
        const rows = await listJobs(store.db, { kinds, status: o.status, accountId: o.account, limit });
        print(
          !!o.json,
          rows,
          rows.length === 0 ? '(no jobs)' : table(['KIND', 'ID', 'ACCOUNT', 'STATUS', 'CREATED', 'FINISHED', 'ATTEMPTS', 'ERROR'], rows.map((j) => [j.kind, j.id, j.accountId, j.status, j.createdAt, j.completedAt, j.attempts, j.error])),
        );
      }),
    );
}
