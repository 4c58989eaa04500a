// `sdg crawl start`: a crawl cycle now, over every watched account, as the schedule would start one
// (after an outage of the data source, or to see fresh metrics without waiting for the next
// boundary). The workers of every process find it at their next poll. The schedule is kept: the next
// scheduled cycle is due at the first boundary after this one's start, as after any cycle.
import type { Command } from 'commander';
import { anyWatchlisted, runningCycle, startCycle, type CycleRow } from '../crawl/crawl-repo.js';
import { newCycleId } from '../domain/record-ids.js';
import { CliError, print } from './output.js';
import { withStore } from './with-store.js';

const running = (c: CycleRow) =>
  new CliError(
    `Crawl cycle ${c.id} is running (started ${c.started_at}, ${c.accounts_completed + c.accounts_failed} of ${c.accounts_targeted} accounts done); cycles never overlap: start one after it completes.`,
    'cycle_running',
    3,
    { cycleId: c.id },
  );

const nothingWatched = () => new CliError('No account is on any watchlist: there is nothing to crawl.', 'nothing_to_crawl', 3);

export function registerCrawlCommands(program: Command): void {
  const crawl = program.command('crawl').description('the crawl of every watched account');
  crawl
    .command('start')
    .description('start a crawl cycle now over every watched account (refused while one runs)')
    .option('--json', 'print JSON')
    .action(async (o: { json?: boolean }) =>
      withStore(async (store) => {
        const before = await runningCycle(store.db);
        if (before) throw running(before);
        if (!(await anyWatchlisted(store.db))) throw nothingWatched();
        const c = await startCycle(store.db, { id: newCycleId(), trigger: 'operator', slot: null, now: new Date().toISOString(), who: 'all' });
        if (!c) {
          // The scheduler started one meanwhile (the store lets one run at a time), or the watchlist emptied.
          const now = await runningCycle(store.db);
          if (now) throw running(now);
          throw nothingWatched();
        }
        print(!!o.json, { cycleId: c.id, startedAt: c.started_at, accountsTargeted: c.accounts_targeted }, `started crawl cycle ${c.id} over ${c.accounts_targeted} accounts`);
      }),
    );
}
