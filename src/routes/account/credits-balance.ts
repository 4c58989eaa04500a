import { Type } from '@sinclair/typebox';
import { getBalance } from '../../credits/credits-repo.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

export const Balance = Type.Object(
  { accountId: Type.String(), balance: Type.Integer({ description: 'credits available now' }), updatedAt: Type.String({ format: 'date-time', description: 'when the balance last changed' }) },
  { title: 'Balance' },
);

export function registerCreditsBalance(app: App, deps: Pick<Deps, 'store'>): void {
  app.get(
    '/api/v1/credits/balance',
    {
      schema: {
        operationId: 'getCreditsBalance',
        tags: ['account'],
        summary: "The account's credit balance.",
        description: 'The credits available now and when they last changed. Every answer of a keyed call also carries the balance in X-Credits-Remaining.',
        response: { 200: single(Balance, 'The balance.') },
      },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const b = await getBalance(deps.store.db, accountId);
      const last = await deps.store.db
        .selectFrom('ledger_entries')
        .select('created_at')
        .where('account_id', '=', accountId)
        .orderBy('created_at', 'desc')
        .limit(1)
        .executeTakeFirst();
      const acc = await deps.store.db.selectFrom('accounts').select('created_at').where('id', '=', accountId).executeTakeFirstOrThrow();
      return { data: { accountId, balance: b?.balance ?? 0, updatedAt: last?.created_at ?? acc.created_at }, meta: { requestId: request.id, cached: false } };
    },
  );
}
