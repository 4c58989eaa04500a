import type { Kysely, Migration } from 'kysely';

// Export retention (src/exports/export-retention.ts): `expired_at` is when a completed export passed
// EXPORT_RETENTION_DAYS and its download stopped (the record stays); `object_removed_at` is when its
// file was deleted from the object store. The two are separate so that a sweep interrupted between
// marking and deleting finds the files it still owes at its next run.
export function exportRetentionMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('exports').addColumn('expired_at', 'text').execute();
      await db.schema.alterTable('exports').addColumn('object_removed_at', 'text').execute();
      // Completed exports not yet expired, oldest first; and expired ones whose file is still to remove.
      await db.schema.createIndex('exports_retention_idx').on('exports').columns(['status', 'expired_at', 'completed_at']).execute();
      await db.schema.createIndex('exports_removal_idx').on('exports').columns(['object_removed_at', 'expired_at']).execute();
    },
  };
}
