import type { Store } from '../db/connect.js';
import type { MeterStore } from './meter-store.js';
import { PostgresMeterStore, type PostgresMeterOptions } from './postgres-meter-store.js';
import { SqliteMeterStore } from './sqlite-meter-store.js';

/** The store's implementation of metering. */
export function meterStoreFor(store: Store, opts: PostgresMeterOptions): MeterStore {
  return store.sqlite && store.grouped ? new SqliteMeterStore(store.sqlite, store.grouped) : new PostgresMeterStore(store.db, opts, store.chargeDb);
}
