import { SqliteAdapter, SqliteDialect, type DialectAdapter } from 'kysely';

/**
 * Kysely's SQLite dialect, but its migrator runs all pending migrations in one transaction, as it
 * does on Postgres. SQLite's DDL is transactional; Kysely's adapter says it is not, so its migrator
 * ran each statement on its own, and a start cut short (a full disk, kill -9) left part of a
 * migration without its record: every later start then failed with "table … already exists".
 */
export class TransactionalDdlSqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}
