import { Type } from '@sinclair/typebox';
import { batchItems, createBatch, findBatch } from '../../watchlist/batch-repo.js';
import { newBatchId } from '../../domain/record-ids.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { NumericId, single } from '../../http/schemas.js';
import { batchRecord, BatchRecord, meta } from './schemas.js';

export const RemoveWatchlistBody = Type.Object(
  { socialUserIds: Type.Array(NumericId, { minItems: 1, maxItems: 100, description: '1 to 100 ids of watched accounts' }) },
  { additionalProperties: false, examples: [{ socialUserIds: ['1402937461029384756'] }] },
);

export function registerRemoveWatchlistBatch(app: App, deps: Pick<Deps, 'bulk' | 'config' | 'store'>): void {
  app.post(
    '/social/v1/bulk-export/watchlist/batch-remove',
    {
      schema: {
        operationId: 'removeWatchlistBatch',
        tags: ['bulk-export'],
        summary: 'Removes up to 100 accounts from the watchlist, in the background.',
        description: 'Poll GET /social/v1/bulk-export/watchlist/batch/{batchId}: each item ends removed or not_present. Unfinished batches (adds and removes) count against MAX_OPEN_BATCHES_PER_ACCOUNT (default 10): beyond it 409 open_jobs_limit_reached, not charged.',
        body: RemoveWatchlistBody,
        response: { 202: single(BatchRecord, 'The batch, queued: poll it for the outcome of each item.') },
      },
      config: { errors: ['open_jobs_limit_reached'] },
    },
    async (request, reply) => {
      const id = newBatchId();
      await createBatch(deps.store.db, {
        id,
        accountId: request.auth!.accountId,
        operation: 'remove',
        items: request.body.socialUserIds.map((socialUserId) => ({ socialUserId, username: null })),
        now: deps.bulk.clock().toISOString(),
      }, deps.config.quotas.openBatchesPerAccount);
      deps.bulk.wakeups.notify();
      const batch = (await findBatch(deps.store.db, id))!;
      reply.code(202);
      return { data: batchRecord(batch, await batchItems(deps.store.db, id)), meta: meta(request.id) };
    },
  );
}
