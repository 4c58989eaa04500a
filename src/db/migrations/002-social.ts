import type { Kysely, Migration } from 'kysely';

// What was fetched from the data source: profiles, tweets, retweet edges, communities, list pages.
// Resources are kept whole as JSON (`data`); the columns beside it are what queries filter and sort on.
export function socialMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('profiles')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('username', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('profiles_username_idx').on('profiles').column('username').execute();
      await db.schema
        .createTable('tweets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        // id left-padded to 20 digits, so text order is numeric order on both backends
        .addColumn('seq', 'text', (c) => c.notNull())
        .addColumn('author_id', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('metrics', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tweets_author_idx').on('tweets').columns(['author_id', 'created_at', 'seq']).execute();
      await db.schema.createIndex('tweets_created_idx').on('tweets').columns(['created_at', 'seq']).execute();
      await db.schema
        .createTable('retweets')
        .addColumn('tweet_id', 'text', (c) => c.notNull())
        .addColumn('user_id', 'text', (c) => c.notNull())
        .addColumn('retweeted_at', 'text')
        .addPrimaryKeyConstraint('retweets_pk', ['tweet_id', 'user_id'])
        .execute();
      await db.schema
        .createTable('communities')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('data', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('list_cache')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('fetched_at', 'text', (c) => c.notNull())
        .execute();
    },
  };
}
