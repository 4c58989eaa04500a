// The bulk-export group (docs/spec/contract.md, "Bulk export records"), one file per endpoint, plus
// the public target of download links.
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { registerAddWatchlistBatch } from './add-watchlist-batch.js';
import { registerDownloadFile } from './download-file.js';
import { registerGenerateExport } from './generate-export.js';
import { registerGetCrawlStatus } from './get-crawl-status.js';
import { registerGetExport } from './get-export.js';
import { registerGetExportDownload } from './get-export-download.js';
import { registerGetLatestExport } from './get-latest-export.js';
import { registerGetWatchlistBatch } from './get-watchlist-batch.js';
import { registerListExports } from './list-exports.js';
import { registerListWatchlist } from './list-watchlist.js';
import { registerRemoveWatchlistBatch } from './remove-watchlist-batch.js';

export function registerBulkExportRoutes(app: App, deps: Deps): void {
  registerGenerateExport(app, deps);
  registerAddWatchlistBatch(app, deps);
  registerRemoveWatchlistBatch(app, deps);
  registerGetWatchlistBatch(app, deps);
  registerGetExportDownload(app, deps);
  registerGetLatestExport(app, deps);
  registerGetExport(app, deps);
  registerGetCrawlStatus(app, deps);
  registerListExports(app, deps);
  registerListWatchlist(app, deps);
  registerDownloadFile(app, deps);
}
