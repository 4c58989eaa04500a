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

/** Brings the schema to the latest version; throws with the failing migration's name. */
export async function migrateToLatest(store: Store): Promise<MigrationResult[]> {
  const { error, results } = await (await migratorFor(store)).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
  return results ?? [];
}
