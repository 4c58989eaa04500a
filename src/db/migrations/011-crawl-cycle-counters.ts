import { sql, type Kysely, type Migration } from 'kysely';

// A running cycle's row now keeps its totals as it goes (crawl-repo.ts); before, they were filled
// in only when it completed. A cycle running across the upgrade gets what its targets hold so far.
export function crawlCycleCountersMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await sql`
        update crawl_cycles set
          accounts_targeted = (select count(*) from crawl_targets t where t.cycle_id = crawl_cycles.id),
          accounts_completed = (select count(*) from crawl_targets t where t.cycle_id = crawl_cycles.id and t.status = 'completed'),
          accounts_failed = (select count(*) from crawl_targets t where t.cycle_id = crawl_cycles.id and t.status = 'failed'),
          tweets_ingested = (select coalesce(sum(t.tweets_ingested), 0) from crawl_targets t where t.cycle_id = crawl_cycles.id),
          tweets_updated = (select coalesce(sum(t.tweets_updated), 0) from crawl_targets t where t.cycle_id = crawl_cycles.id)
        where status = 'running'`.execute(db);
    },
    async down() {
      // The counters stay; the code before this migration ignores them while a cycle runs.
    },
  };
}
