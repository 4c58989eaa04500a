import { SocialProfile } from '../../domain/models.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';
import { sourceErrors, UsernameParams } from './params.js';

export function registerUserByUsername(app: App, deps: Pick<Deps, 'social'>): void {
  app.get(
    '/social/v1/users/by/username/:username',
    {
      schema: {
        operationId: 'getUserByUsername',
        tags: ['social'],
        summary: 'A user profile by handle.',
        description: 'Reads the profile from the configured data source (or the gateway’s recent copy, meta.cached true). A suspended or unknown handle is 404 not_found.',
        params: UsernameParams,
        response: { 200: single(SocialProfile, 'The user’s profile.') },
      },
      config: { errors: sourceErrors },
    },
    async (request) => {
      const r = await deps.social.profileByUsername(request.params.username);
      return { data: r.value, meta: { requestId: request.id, cached: r.cached } };
    },
  );
}
