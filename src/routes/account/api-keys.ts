import { Type } from '@sinclair/typebox';
import { createKey, keysPage, revokeKey, type KeyPosition } from '../../accounts/accounts-repo.js';
import { assertKeyRoom, keyLimitOf } from '../../accounts/key-limit.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { PageQuery, paginated, single } from '../../http/schemas.js';
import { keysetPage } from '../../pagination/keyset-page.js';

export const NewApiKey = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  key: Type.Union([Type.String(), Type.Null()], {
    description: 'The secret: shown only in this response. A replay of it (same Idempotency-Key) answers null, as the secret is never kept.',
  }),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
});
export const ApiKeyView = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  prefix: Type.String(),
  createdAt: Type.String({ format: 'date-time' }),
  revokedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});
const CreateBody = Type.Object({ name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false });

function withoutSecret(body: string): string {
  const answer = JSON.parse(body) as { data: { key: string | null } };
  answer.data.key = null;
  return JSON.stringify(answer);
}

export function registerApiKeyRoutes(app: App, deps: Pick<Deps, 'config' | 'cursors' | 'keys' | 'store'>): void {
  app.post(
    '/api/v1/api-keys',
    {
      schema: {
        operationId: 'createApiKey',
        tags: ['account'],
        summary: 'Creates an API key for the calling account. The key is shown once.',
        body: CreateBody,
        response: { 201: single(NewApiKey) },
      },
      // The kept answer of an Idempotency-Key would otherwise hold the secret, replayable by any key
      // of the account for a day: it keeps the key's id and prefix only.
      config: { keptAnswer: withoutSecret },
    },
    async (request, reply) => {
      await assertKeyRoom(deps.store.db, request.auth!.accountId, keyLimitOf(deps.config.plans, request.auth!.planId));
      const k = await createKey(deps.store.db, request.auth!.accountId, request.body.name ?? null);
      reply.code(201);
      return { data: k, meta: { requestId: request.id, cached: false } };
    },
  );

  app.get(
    '/api/v1/api-keys',
    {
      schema: {
        operationId: 'listApiKeys',
        tags: ['account'],
        summary: "The account's API keys, revoked ones included, newest first (never the secrets). Paginated: pass nextCursor as ?cursor=.",
        querystring: PageQuery,
        response: { 200: paginated(ApiKeyView) },
      },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const list = `api-keys:${accountId}`;
      const before = request.query.cursor ? deps.cursors.decode<KeyPosition>(list, request.query.cursor) : undefined;
      const rows = await keysPage(deps.store.db, accountId, limit, before && { createdAt: String(before.createdAt), id: String(before.id) });
      return keysetPage(request, deps.cursors, list, rows, limit, (k) => k, (k) => ({ createdAt: k.createdAt, id: k.id }) satisfies KeyPosition);
    },
  );

  app.delete(
    '/api/v1/api-keys/:id',
    {
      schema: {
        operationId: 'revokeApiKey',
        tags: ['account'],
        summary: 'Revokes one of the account’s keys; it stops working at once.',
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) }),
        response: { 200: single(ApiKeyView) },
      },
    },
    async (request) => {
      const k = await revokeKey(deps.store.db, request.params.id, request.auth!.accountId);
      deps.keys.forget();
      if (!k) throw new AppError('not_found', `No API key ${request.params.id} on this account.`);
      return { data: k, meta: { requestId: request.id, cached: false } };
    },
  );
}
