import { Type } from '@sinclair/typebox';
import { createKey, listKeys, revokeKey } from '../../accounts/accounts-repo.js';
import { assertKeyRoom, keyLimitOf } from '../../accounts/key-limit.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

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

export function registerApiKeyRoutes(app: App, deps: Pick<Deps, 'config' | 'keys' | 'store'>): void {
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
        summary: "The account's API keys (never the secrets).",
        response: { 200: single(Type.Object({ keys: Type.Array(ApiKeyView) })) },
      },
    },
    async (request) => ({ data: { keys: await listKeys(deps.store.db, request.auth!.accountId) }, meta: { requestId: request.id, cached: false } }),
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
