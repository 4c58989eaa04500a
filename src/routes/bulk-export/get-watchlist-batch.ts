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
        description: 'A batch goes queued → processing → completed (or failed); each item ends added, already_present, removed, not_present, not_found, limit_exceeded or failed. Another account’s batch is 404 not_found.',
        params: Type.Object(
          { batchId: Type.String({ minLength: 1, maxLength: 64, description: 'batchId from the answer that created the batch', examples: ['wlb_Qm2x8Ka0Lp3ZtR7c'] }) },
          { additionalProperties: false },
        ),
        response: { 200: single(BatchRecord, 'The batch and its items.') },
      },
      config: { errors: ['not_found'] },
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
