import { sql, type Kysely, type Migration } from 'kysely';
import type { Dialect } from '../connect.js';

// Postgres metering moves from a stored hold per call to leases: each API process holds a slice of an
// account's available balance (accounts.reserved is the sum of the slices) and spends it in memory.
// A process renews its liveness (credit_lease_owners); the leases of one that stops are swept. SQLite keeps holds in the process and needs none.
// The per-call holds of credit_reservations are gone with the table; none outlives a deploy.
export function creditLeasesMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.dropTable('credit_reservations').execute();
      await sql`update accounts set reserved = 0 where reserved <> 0`.execute(db);
      if (dialect !== 'postgres') return;
      await db.schema
        .createTable('credit_lease_owners')
        // A process holding leases (a random id per process start), alive while it renews expires_at.
        .addColumn('owner', 'text', (c) => c.primaryKey())
        .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('credit_leases')
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
        // Set by a process that could not lease what a call needs: give back what you do not use.
        .addColumn('wanted', 'boolean', (c) => c.notNull().defaultTo(false))
        .addPrimaryKeyConstraint('credit_leases_pk', ['account_id', 'owner'])
        .execute();
      await db.schema.createIndex('credit_leases_owner_idx').on('credit_leases').column('owner').execute();
    },
  };
}
