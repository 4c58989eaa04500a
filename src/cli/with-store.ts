// Every command's store: the same DATA_DIR / DATABASE_URL as the server, migrated, closed after.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../config/config.js';
import { openStore, SQLITE_FILE, type Store } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';

export async function withStore<T>(fn: (store: Store, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const file = join(config.dataDir, SQLITE_FILE);
  const made = !config.databaseUrl && !existsSync(file);
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, sqlitePageSize: config.sqlitePageSize, poolSize: 2 });
  // Run from another directory, or with DATA_DIR mistyped, a command made a store of its own, and an
  // account made there got 401 from the running gateway: said on stderr, not refused (a first
  // account may be made before the gateway's first start).
  if (made) process.stderr.write(`sdg: no store was at ${resolve(file)}; made a new one. If the gateway runs with another DATA_DIR, it will not see this.\n`);
  try {
    await migrateToLatest(store);
    return await fn(store, config);
  } finally {
    await store.close();
  }
}
