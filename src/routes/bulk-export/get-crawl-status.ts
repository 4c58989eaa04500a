import { crawlStatus } from '../../crawl/crawl-status.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { CrawlStatusEnvelope } from './schemas.js';

export function registerGetCrawlStatus(app: App, deps: Pick<Deps, 'store' | 'config' | 'bulk'>): void {
  app.get(
    '/social/v1/bulk-export/crawl-status',
    {
      schema: {
        operationId: 'getCrawlStatus',
        tags: ['bulk-export'],
        summary: 'The feed crawl: the cycle in progress (if any), the last completed cycle and the schedule.',
        description:
          'The crawl visits every watched account of every API account on a schedule, storing new tweets and refreshing recent ones. percentComplete = (accountsCompleted + accountsFailed) / accountsTargeted × 100. One crawl serves all accounts.',
        response: { 200: CrawlStatusEnvelope },
      },
    },
    async () => ({ success: true as const, data: await crawlStatus(deps) }),
  );
}
