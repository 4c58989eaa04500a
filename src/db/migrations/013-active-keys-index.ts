import { sql, type Kysely, type Migration } from 'kysely';

// The key lookup counts the account's active keys (the 429's details.scope names the key when it is
// the only one). Revoked keys are kept and an account may make any number over time, so the count
// reads an index of the active ones only: at most the plan's key limit, whatever was revoked.
export function activeKeysIndexMigration(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.createIndex('api_keys_active_idx').on('api_keys').column('account_id').where(sql.ref('revoked_at'), 'is', null).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('api_keys_active_idx').execute();
    },
  };
}
