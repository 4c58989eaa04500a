// Runs one export job in a fresh process (argv: DATA_DIR, export id) and prints its time and peak
// RSS as JSON: the export's own memory, apart from the benchmark's seeding.
import { runExportNow } from '../src/exports/export-job.js';
import { buildBulkServices } from '../src/wiring/background.js';
import { loadConfig } from '../src/config/config.js';
import { openStore } from '../src/db/connect.js';
import { withPeakRss } from './fixtures.js';

const [dataDir, id] = process.argv.slice(2);
if (!dataDir || !id) throw new Error('usage: export-child.ts DATA_DIR EXPORT_ID');
// Only what the export job uses: configuration, the store and the bulk services.
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', EXPORT_PAGE_SIZE: process.env.EXPORT_PAGE_SIZE });
const deps = { config, store: openStore({ dataDir: config.dataDir }), bulk: buildBulkServices(config) };
try {
  const t0 = performance.now();
  const { result, peakRss, baselineRss } = await withPeakRss(() => runExportNow(deps, id));
  if (!result) throw new Error(`export ${id} was not claimable`);
  console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000, peakRss, baselineRss }));
} finally {
  await deps.store.close();
}
