import { Migrator, sql, type Kysely, type MigrationResult, type MigrationResultSet } from 'kysely';
import type { Dialect, Store } from './connect.js';
import type { Database } from './schema.js';
import { migrationProvider, migrations } from './migrations/index.js';

/**
 * The store was migrated by a newer release: it holds migrations this one does not know. This
 * release's code may not work on that schema, and it cannot undo what it does not have, so it
 * refuses to start; the newer release's `sdg migrate --to` can take the schema back.
 */
export class SchemaNewerError extends Error {
  constructor(
    readonly unknown: string[],
    readonly latest: string,
  ) {
    super(`The store's schema is newer than this release: it has migration ${unknown.join(', ')}, which this release does not know (its last is ${latest}).`);
    this.name = 'SchemaNewerError';
  }
}

/** A migration down to `target` would pass migrations that have no down step. */
export class MigrationOneWayError extends Error {
  constructor(
    readonly oneWay: string[],
    readonly target: string,
  ) {
    super(`Cannot migrate down to ${target}: ${oneWay.join(', ')} cannot be undone (no down step).`);
    this.name = 'MigrationOneWayError';
  }
}

/** Names of the migrations the store has applied; none when it has never been migrated. */
async function appliedNames(store: Store): Promise<string[]> {
  try {
    return (await sql<{ name: string }>`select name from kysely_migration`.execute(store.db)).rows.map((r) => r.name);
  } catch {
    // No bookkeeping table yet: a new store.
    return [];
  }
}

/** This release's migrations, in the order they apply (the same names on both stores). */
export function migrationNames(dialect: Dialect = 'sqlite'): string[] {
  return Object.keys(migrations(dialect)).sort();
}

/** Of the migrations a store has applied, those this release does not know (a newer release's). */
export function unknownMigrations(applied: string[], dialect: Dialect = 'sqlite'): string[] {
  const known = migrationNames(dialect);
  return applied.filter((n) => !known.includes(n)).sort();
}

/** Throws SchemaNewerError when the store has migrations this release does not know. */
export async function assertSchemaKnown(store: Store): Promise<void> {
  const unknown = unknownMigrations(await appliedNames(store), store.dialect);
  if (unknown.length) throw new SchemaNewerError(unknown, migrationNames(store.dialect).at(-1)!);
}

export async function migratorFor(store: Store): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables in any schema unless told which: name ours, so that
  // several deployments (or test schemas) in one Postgres database do not see each other's.
  const schema =
    store.dialect === 'postgres' ? (await sql<{ s: string | null }>`select current_schema() as s`.execute(store.db)).rows[0]?.s : undefined;
  // A search_path (DATABASE_URL's options) naming only schemas that do not exist: Kysely then failed
  // on its lock table with a stack trace. Said as Postgres says it when nothing can be created.
  if (schema === null) throw Object.assign(new Error('No schema of the search_path exists.'), { code: '3F000' });
  const db = schema ? withSchemaIntrospection(store.db, schema) : store.db;
  return new Migrator({ db, provider: migrationProvider(store.dialect), ...(schema ? { migrationTableSchema: schema } : {}) });
}

/**
 * The store's Kysely, but its introspection (which the migrator uses to see whether its own tables
 * exist) reads one schema's tables only. Kysely's Postgres introspector reads every schema's tables
 * and columns through catalog functions that fail ("column "epoch" of relation
 * "credit_lease_owners" does not exist") when another schema of the database drops a column
 * meanwhile: a deployment (or a test) migrating down in its own schema made another's start fail.
 */
function withSchemaIntrospection(db: Kysely<Database>, schema: string): Kysely<Database> {
  const introspection = {
    getSchemas: async () => [{ name: schema }],
    getTables: async () => {
      const rows = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db);
      return rows.rows.map((r) => ({ name: r.name, schema, isView: false, columns: [] }));
    },
    getMetadata: async () => ({ tables: await introspection.getTables() }),
  };
  // The rest is the store's own Kysely (its methods bound to it: Kysely keeps its state in private fields).
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
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
  await assertSchemaKnown(store);
  return outcome(await (await migratorFor(store)).migrateToLatest());
}

/**
 * Migrates up or down to `target` (a migration of this release), in one transaction: how an
 * operator takes the schema back before returning to an older release.
 */
export async function migrateTo(store: Store, target: string): Promise<MigrationResult[]> {
  await assertSchemaKnown(store);
  // Kysely would pass over a migration without a down step and forget it was applied: its tables
  // would stay, and the next migration up would fail on them.
  const all = migrations(store.dialect);
  const oneWay = (await appliedNames(store)).filter((n) => n > target && !all[n]?.down).sort();
  if (oneWay.length) throw new MigrationOneWayError(oneWay, target);
  return outcome(await (await migratorFor(store)).migrateTo(target));
}

function outcome({ error, results }: MigrationResultSet): MigrationResult[] {
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? String(error)}`);
  }
  return results ?? [];
}
