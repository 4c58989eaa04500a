// Domain services that routes use, grouped so tests can hand routes fakes.
import type { BulkServices } from './background.js';
import type { WalletService } from '../connectors/wallet/wallet-service.js';
import type { SocialService } from '../social/social-service.js';
import type { DataSource } from '../sources/types.js';
import type { TweetStore } from '../social/tweet-store.js';

export interface Services {
  startedAt: Date;
  /** Signs cursors and download links. */
  secret: string;
  wallet: WalletService;
  source: DataSource;
  social: SocialService;
  /** Where fetched tweets are written (API reads and the crawl). */
  tweetStore: TweetStore;
  /** Bulk export: object store, clock and wake-ups of the background jobs. */
  bulk: BulkServices;
}
