import { SocialProfile } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { PageQuery, paginated } from '../../http/schemas.js';
import { pageEnvelope, positionOf } from './list-page.js';
import { IdParams, protectedErrors } from './params.js';

export function registerRetweetedBy(app: App, deps: Pick<Deps, 'cursors' | 'social'>): void {
  app.get(
    '/social/v1/tweets/:id/retweeted_by',
    {
      schema: {
        operationId: 'getRetweeters',
        tags: ['social'],
        summary: 'Users who retweeted a tweet, most recent retweet first.',
        description: 'One page of the profiles of the users who retweeted the tweet; each page is one call and costs the same. Follow nextCursor to the end.',
        params: IdParams,
        querystring: PageQuery,
        response: { 200: paginated(SocialProfile, 'One page of retweeters.') },
      },
      config: { errors: [...protectedErrors, 'invalid_cursor'] },
    },
    async (request) => {
      const list = `retweeted_by:${request.params.id}`;
      const after = positionOf(deps.cursors, list, request.query.cursor);
      const page = await deps.social.retweeters(request.params.id, request.query.limit ?? 20, after);
      return pageEnvelope(deps.cursors, list, request, page);
    },
  );
}
