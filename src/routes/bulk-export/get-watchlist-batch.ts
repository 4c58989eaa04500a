import { Type } from '@sinclair/typebox';
import { batchItems, findBatch } from '../../watchlist/batch-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';
import { batchRecord, BatchRecord, meta } from './schemas.js';

export function registerGetWatchlistBatch(app: App, deps: Pick<Deps, 'store'>): void {
  app.get(
    '/social/v1/bulk-export/watchlist/batch/:batchId',
    {
      schema: {
        operationId: 'getWatchlistBatch',
        tags: ['bulk-export'],
        summary: 'The status of a watchlist batch and the outcome of each of its items.',
        params: Type.Object({ batchId: Type.String({ minLength: 1, maxLength: 64 }) }, { additionalProperties: false }),
        response: { 200: single(BatchRecord) },
      },
    },
    async (request) => {
      const batch = await findBatch(deps.store.db, request.params.batchId);
      // Another account's batch is answered exactly like one that never existed.
      if (!batch || batch.account_id !== request.auth!.accountId) {
        throw new AppError('not_found', `No watchlist batch ${request.params.batchId}.`);
      }
      return { data: batchRecord(batch, await batchItems(deps.store.db, batch.id)), meta: meta(request.id) };
    },
  );
}
