import { Migrator, type MigrationResult } from 'kysely';
import type { Store } from './connect.js';
import { migrationProvider } from './migrations/index.js';

export function migratorFor(store: Store): Migrator {
  return new Migrator({ db: store.db, provider: migrationProvider(store.dialect) });
}

/** Brings the schema to the latest version; throws with the failing migration's name. */
export async function migrateToLatest(store: Store): Promise<MigrationResult[]> {
  const { error, results } = await migratorFor(store).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
  return results ?? [];
}
