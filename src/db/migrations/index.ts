import type { Migration, MigrationProvider } from 'kysely';
import type { Dialect } from '../connect.js';
import { coreMigration } from './001-core.js';
import { socialMigration } from './002-social.js';
import { bulkMigration } from './003-bulk.js';
import { blueskyMigration } from './004-bluesky.js';
import { creditLeasesMigration } from './006-credit-leases.js';
import { exportRetentionMigration } from './007-export-retention.js';
import { ledgerTimeMigration } from './008-ledger-time.js';
import { hardeningMigration } from './009-hardening.js';
import { ledgerNoForeignKeyMigration } from './010-ledger-no-fk-pg.js';
import { crawlCycleCountersMigration } from './011-crawl-cycle-counters.js';
import { ledgerOneIndexMigration } from './012-ledger-one-index.js';
import { activeKeysIndexMigration } from './013-active-keys-index.js';
import { leaseSpendingInLedgerMigration } from './014-lease-spending-in-ledger.js';
import { batchAccountStatusIndexMigration } from './015-batch-account-status-index.js';

// Versioned migrations, in order. Names sort lexically; never rename or edit one that has shipped.
export function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '001-core': coreMigration(dialect),
    '002-social': socialMigration(),
    '003-bulk': bulkMigration(),
    '004-bluesky': blueskyMigration(),
    '006-credit-leases': creditLeasesMigration(dialect),
    '007-export-retention': exportRetentionMigration(),
    '008-ledger-time': ledgerTimeMigration(),
    '009-hardening': hardeningMigration(),
    '010-ledger-no-fk-pg': ledgerNoForeignKeyMigration(dialect),
    '011-crawl-cycle-counters': crawlCycleCountersMigration(),
    '012-ledger-one-index': ledgerOneIndexMigration(dialect),
    '013-active-keys-index': activeKeysIndexMigration(),
    '014-lease-spending-in-ledger': leaseSpendingInLedgerMigration(dialect),
    '015-batch-account-status-index': batchAccountStatusIndexMigration(),
  };
}

export function migrationProvider(dialect: Dialect): MigrationProvider {
  return { getMigrations: async () => migrations(dialect) };
}
