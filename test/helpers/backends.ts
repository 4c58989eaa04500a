// Which store backends the tests run on: SQLite always; Postgres when TEST_DATABASE_URL is set
// (.ci/run sets it, so nothing skips in CI).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type Dialect, type Store } from '../../src/db/connect.js';

export function backends(): Dialect[] {
  return process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
}

export interface TestStore {
  store: Store;
  /** The settings a child process needs to open the same store. */
  env: Record<string, string>;
  dataDir: string;
  dispose(): Promise<void>;
}

/** A fresh, empty store: a new SQLite file in a temp dir, or a new schema in the test Postgres database. */
export async function createTestStore(dialect: Dialect): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sdg-test-'));
  if (dialect === 'sqlite') {
    const store = openStore({ dataDir });
    return {
      store,
      dataDir,
      env: { DATA_DIR: dataDir },
      dispose: async () => {
        await store.close().catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const schema = await createPostgresSchema(process.env.TEST_DATABASE_URL!);
  const databaseUrl = schema.url;
  const store = openStore({ databaseUrl, dataDir });
  return {
    store,
    dataDir,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    dispose: async () => {
      await store.close().catch(() => undefined);
      await schema.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A new, empty schema in the Postgres database at `base`: a URL that uses it, and its removal. */
export async function createPostgresSchema(base: string, prefix = 't'): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
    },
  };
}
