import { Migrator, sql, type MigrationResult } from 'kysely';
import type { Store } from './connect.js';
import { migrationProvider } from './migrations/index.js';

export async function migratorFor(store: Store): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables in any schema unless told which: name ours, so that
  // several deployments (or test schemas) in one Postgres database do not see each other's.
  const schema =
    store.dialect === 'postgres' ? (await sql<{ s: string }>`select current_schema() as s`.execute(store.db)).rows[0]?.s : undefined;
  return new Migrator({ db: store.db, provider: migrationProvider(store.dialect), ...(schema ? { migrationTableSchema: schema } : {}) });
}

/**
 * Brings the schema to the latest version; throws with the failing migration's name.
 * Kysely's migration lock is per process on SQLite, so two processes starting together on a fresh
 * store can race: the loser's transaction (all pending migrations run in one, on SQLite too: see
 * sqlite-dialect.ts) fails and rolls back whole, and it tries again, by which time it finds the
 * winner's work done.
 */
export async function migrateToLatest(store: Store): Promise<MigrationResult[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(store);
    } catch (err) {
      const racing = store.dialect === 'sqlite' && /already exists|SQLITE_BUSY|locked|UNIQUE constraint/i.test(String((err as Error).message));
      if (!racing || attempt >= 10) throw err;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
  }
}

async function migrateOnce(store: Store): Promise<MigrationResult[]> {
  const { error, results } = await (await migratorFor(store)).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
  return results ?? [];
}
