import type { Kysely, Migration } from 'kysely';

// The Bluesky source's numeric ids (src/sources/bluesky/id-map.ts): each post URI and account DID
// gets one decimal id, kept for good. Both columns are unique: the id is the primary key (a collision
// makes the assignment try the next id), the name has its own unique constraint (a concurrent
// assignment of the same name keeps the first). Ids are text: they use all 63 bits.
export function blueskyMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('bluesky_post_ids')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('uri', 'text', (c) => c.notNull().unique())
        .execute();
      await db.schema
        .createTable('bluesky_user_ids')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('did', 'text', (c) => c.notNull().unique())
        .execute();
    },
  };
}
