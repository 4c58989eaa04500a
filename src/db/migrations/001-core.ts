import { sql } from 'kysely';
import type { Kysely, Migration } from 'kysely';
import type { Dialect } from '../connect.js';

// Accounts, keys, credits ledger, reservations and idempotency records.
export function coreMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('settings')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('plan_id', 'text', (c) => c.notNull())
        .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0).check(sqlCheck('balance >= 0')))
        .addColumn('reserved', 'bigint', (c) => c.notNull().defaultTo(0).check(sqlCheck('reserved >= 0')))
        .addColumn('rate_limit_per_minute', 'integer')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('name', 'text')
        .addColumn('prefix', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('api_keys_account_idx').on('api_keys').columns(['account_id', 'created_at']).execute();
      await db.schema
        .createTable('credit_reservations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('amount', 'bigint', (c) => c.notNull().check(sqlCheck('amount > 0')))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('credit_reservations_created_idx').on('credit_reservations').column('created_at').execute();
      await db.schema
        .createTable('ledger_entries')
        .addColumn('id', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
          dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('amount', 'bigint', (c) => c.notNull())
        .addColumn('balance_after', 'bigint', (c) => c.notNull())
        .addColumn('request_id', 'text')
        .addColumn('key_id', 'text')
        .addColumn('endpoint', 'text')
        .addColumn('note', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ledger_entries_account_idx').on('ledger_entries').columns(['account_id', 'id']).execute();
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_created_idx').on('idempotency_keys').column('created_at').execute();
    },
  };
}


function sqlCheck(expr: string) {
  return sql.raw(expr);
}
