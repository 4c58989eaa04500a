// A PostgresMeterStore whose SQL statements a test replaces, so that it runs without Postgres.
import type { LeaseStatements } from '../../src/credits/lease-statements.js';
import type { PostgresMeterStore } from '../../src/credits/postgres-meter-store.js';

/**
 * Installs `overrides` as the meter's statements. The background ones (its tick's) default to a
 * quiet process: nothing asked of it, its liveness renewed (epoch 1), give-backs, syncs and clean-ups done.
 */
export function stubStatements(meter: PostgresMeterStore, overrides: Partial<LeaseStatements>): void {
  const quiet: Partial<LeaseStatements> = {
    async wanted() {
      return [];
    },
    async renew() {
      return 1;
    },
    async sync() {},
    async giveBack() {},
    async deleteEmpty() {},
  };
  (meter as unknown as { statements: Partial<LeaseStatements> }).statements = { ...quiet, ...overrides };
}

/** Forgets the meter's leases (no statement gives them back) and closes it. */
export async function closeStubbed(meter: PostgresMeterStore): Promise<void> {
  (meter as unknown as { leases: Map<string, unknown> }).leases.clear();
  await meter.close();
}
