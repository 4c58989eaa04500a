import { watchlistPage, type WatchlistPosition } from '../../watchlist/watchlist-repo.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { keysetPage } from '../../pagination/keyset-page.js';
import { PageQuery, paginated } from '../../http/schemas.js';
import { WatchlistEntry, watchlistEntry } from './schemas.js';

export function registerListWatchlist(app: App, deps: Pick<Deps, 'cursors' | 'store'>): void {
  app.get(
    '/social/v1/bulk-export/watchlist',
    {
      schema: {
        operationId: 'listWatchlist',
        tags: ['bulk-export'],
        summary: "The caller's watchlist, most recently added first.",
        description: 'The accounts the crawl follows for this account, as added by watchlist batches.',
        querystring: PageQuery,
        response: { 200: paginated(WatchlistEntry, 'One page of watched accounts.') },
      },
      config: { errors: ['invalid_cursor'] },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const list = `watchlist:${accountId}`;
      const before = request.query.cursor ? deps.cursors.decode<WatchlistPosition>(list, request.query.cursor) : undefined;
      const rows = await watchlistPage(deps.store.db, accountId, limit, before && { addedAt: String(before.addedAt), id: String(before.id) });
      return keysetPage(request, deps.cursors, list, rows, limit, watchlistEntry, (r) => ({ addedAt: r.added_at, id: r.social_user_id }) satisfies WatchlistPosition);
    },
  );
}
