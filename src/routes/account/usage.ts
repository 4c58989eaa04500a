import { Type } from '@sinclair/typebox';
import { ledgerPage } from '../../credits/credits-repo.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { keysetPage } from '../../pagination/keyset-page.js';
import { PageQuery, paginated } from '../../http/schemas.js';

export const LedgerEntry = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('grant'), Type.Literal('charge')]),
  amount: Type.Integer({ description: 'positive for grants, negative for charges' }),
  balanceAfter: Type.Integer(),
  requestId: Type.Union([Type.String(), Type.Null()]),
  keyId: Type.Union([Type.String(), Type.Null()]),
  endpoint: Type.Union([Type.String(), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'UsageRecord' });

export function registerUsage(app: App, deps: Pick<Deps, 'cursors' | 'store'>): void {
  app.get(
    '/api/v1/usage',
    {
      schema: {
        operationId: 'listUsage',
        tags: ['account'],
        summary: "The account's ledger of grants and charges, newest first.",
        description: 'Every credit movement: a grant (positive amount) or the charge of one successful call (negative, with its request id, key and operation). The entries sum to the balance.',
        querystring: PageQuery,
        response: { 200: paginated(LedgerEntry, 'One page of ledger entries.') },
      },
      config: { errors: ['invalid_cursor'] },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const list = `usage:${accountId}`;
      const before = request.query.cursor ? deps.cursors.decode<{ id: number }>(list, request.query.cursor).id : undefined;
      const rows = await ledgerPage(deps.store.db, accountId, limit, before);
      return keysetPage(
        request,
        deps.cursors,
        list,
        rows,
        limit,
        (r) => ({
          id: String(r.id),
          kind: r.kind,
          amount: r.amount,
          balanceAfter: r.balance_after,
          requestId: r.request_id,
          keyId: r.key_id,
          endpoint: r.endpoint,
          note: r.note,
          createdAt: r.created_at,
        }),
        (r) => ({ id: r.id }),
      );
    },
  );
}
