import { Type } from '@sinclair/typebox';
import { createBatch, batchItems, findBatch } from '../../watchlist/batch-repo.js';
import { newBatchId } from '../../domain/record-ids.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { HANDLE_PATTERN, NumericId, single } from '../../http/schemas.js';
import { batchRecord, BatchRecord, meta } from './schemas.js';

// X handles are [A-Za-z0-9_]{1,15}; Bluesky handles are domain names. Both fit; '@' does not.
export const Username = Type.String({ pattern: HANDLE_PATTERN, description: 'handle without the at-sign', examples: ['ada_builds'] });

export const AddWatchlistBody = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          socialUserId: Type.Optional(NumericId),
          username: Type.Optional(Username),
        },
        { additionalProperties: false, description: 'socialUserId, username, or both (they must name the same account)' },
      ),
      { minItems: 1, maxItems: 100, description: '1 to 100 accounts' },
    ),
  },
  { additionalProperties: false, examples: [{ items: [{ username: 'ada_builds' }, { socialUserId: '1402937461029384756' }] }] },
);

export function registerAddWatchlistBatch(app: App, deps: Pick<Deps, 'bulk' | 'config' | 'store'>): void {
  app.post(
    '/social/v1/bulk-export/watchlist/batch',
    {
      schema: {
        operationId: 'addWatchlistBatch',
        tags: ['bulk-export'],
        summary: 'Adds up to 100 accounts to the watchlist, in the background.',
        description:
          "Usernames are resolved to ids through the data source and ids are checked to exist. Poll GET /social/v1/bulk-export/watchlist/batch/{batchId} for each item's outcome. Newly added accounts get their first crawl (the last 7 days) soon after the batch completes. An account may have a limited number of unfinished batches (MAX_OPEN_BATCHES_PER_ACCOUNT, default 10); beyond it the answer is 409 open_jobs_limit_reached, not charged.",
        body: AddWatchlistBody,
        response: { 202: single(BatchRecord, 'The batch, queued: poll it for the outcome of each item.') },
      },
      config: { errors: ['open_jobs_limit_reached'] },
    },
    async (request, reply) => {
      const items = request.body.items;
      const missing = items.flatMap((it, i) => (it.socialUserId === undefined && it.username === undefined ? [i] : []));
      if (missing.length > 0) {
        throw new AppError('invalid_request', `body.items.${missing[0]} needs a socialUserId or a username.`, {
          fields: missing.map((i) => ({ field: `body.items.${i}`, message: 'needs a socialUserId or a username' })),
        });
      }
      const id = newBatchId();
      await createBatch(deps.store.db, {
        id,
        accountId: request.auth!.accountId,
        operation: 'add',
        items: items.map((it) => ({ socialUserId: it.socialUserId ?? null, username: it.username?.toLowerCase() ?? null })),
        now: deps.bulk.clock().toISOString(),
      }, deps.config.quotas.openBatchesPerAccount);
      deps.bulk.wakeups.notify();
      const batch = (await findBatch(deps.store.db, id))!;
      reply.code(202);
      return { data: batchRecord(batch, await batchItems(deps.store.db, id)), meta: meta(request.id) };
    },
  );
}
