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
  const base = process.env.TEST_DATABASE_URL!;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(base);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const databaseUrl = url.toString();
  const store = openStore({ databaseUrl, dataDir });
  return {
    store,
    dataDir,
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    dispose: async () => {
      await store.close().catch(() => undefined);
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop schema if exists ${schema} cascade`);
      await c.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
