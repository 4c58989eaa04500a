import { Type } from '@sinclair/typebox';
import { ledgerEntryTime, ledgerPage, type LedgerPosition } from '../../credits/credits-repo.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { keysetPage } from '../../pagination/keyset-page.js';
import { invalidCursor } from '../../pagination/cursor.js';
import { PageQuery, paginated, StringEnum } from '../../http/schemas.js';
import { defaultCosts } from '../../config/costs.js';

export const LedgerEntry = Type.Object({
  id: Type.String({ description: 'opaque id of the entry (led_…); says nothing about other accounts or volume' }),
  kind: Type.Union([Type.Literal('grant'), Type.Literal('charge'), Type.Literal('refund')], {
    description:
      "grant: credits added (or, with a negative amount, taken back) by the operator; charge: a call's cost; refund: a charge given back, with the charge's request id (a call answered 503 with details.maybeCharged whose charge had committed)",
  }),
  amount: Type.Integer({ description: "negative for charges; positive for grants and refunds, negative for an operator's correction (`sdg credits deduct`)" }),
  balanceAfter: Type.Integer(),
  requestId: Type.Union([Type.String(), Type.Null()]),
  keyId: Type.Union([Type.String(), Type.Null()]),
  endpoint: Type.Union([Type.String(), Type.Null()]),
  note: Type.Union([Type.String(), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
}, { title: 'UsageRecord' });

const UsageQuery = Type.Object(
  {
    ...PageQuery.properties,
    // One of the operations (a misspelt one answered an empty list, as if nothing had been charged).
    endpoint: Type.Optional(StringEnum(Object.keys(defaultCosts), { description: "only this operation's charges (its operationId, e.g. getTweet)", examples: ['getTweet'] })),
  },
  { additionalProperties: false },
);

export function registerUsage(app: App, deps: Pick<Deps, 'cursors' | 'ledgerIds' | 'store'>): void {
  // Ledger ids are a sequence across all accounts: answers and cursors carry them encrypted (opaque-ids.ts).
  const ids = deps.ledgerIds;
  // A cursor holds the last entry's time and opaque id. One issued before the list was ordered by
  // time holds the id only: its entry's time is looked up, so a walk across the upgrade goes on.
  const positionOf = async (accountId: string, p: { after?: unknown; createdAt?: unknown }): Promise<LedgerPosition> => {
    const id = typeof p.after === 'string' ? ids.decode(p.after) : undefined;
    if (id === undefined) throw invalidCursor();
    if (typeof p.createdAt === 'string') return { createdAt: p.createdAt, id };
    const createdAt = await ledgerEntryTime(deps.store.db, accountId, id);
    if (createdAt === undefined) throw invalidCursor();
    return { createdAt, id };
  };
  app.get(
    '/api/v1/usage',
    {
      schema: {
        operationId: 'listUsage',
        tags: ['account'],
        summary: "The account's ledger of grants, charges and refunds, newest first.",
        description: 'Every credit movement: a grant (positive amount), the charge of one successful call (negative, with its request id, key and operation), or the refund of a charge (positive, with the charge\'s request id, key and operation). The entries sum to the balance. Newest first by time; entries of the same millisecond, newest id first. ?endpoint= keeps one operation’s entries.',
        querystring: UsageQuery,
        response: { 200: paginated(LedgerEntry, 'One page of ledger entries.') },
      },
      config: { errors: ['invalid_cursor'] },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const endpoint = request.query.endpoint;
      // A cursor serves the list it came from: the filter is part of the list's name.
      const list = endpoint === undefined ? `usage:${accountId}` : `usage:${accountId}:${endpoint}`;
      const before = request.query.cursor ? await positionOf(accountId, deps.cursors.decode<{ after?: unknown; createdAt?: unknown }>(list, request.query.cursor)) : undefined;
      const rows = await ledgerPage(deps.store.db, accountId, limit, before, endpoint);
      return keysetPage(
        request,
        deps.cursors,
        list,
        rows,
        limit,
        (r) => ({
          id: ids.encode(r.id),
          kind: r.kind,
          amount: r.amount,
          balanceAfter: r.balance_after,
          requestId: r.request_id,
          keyId: r.key_id,
          endpoint: r.endpoint,
          note: r.note,
          createdAt: r.created_at,
        }),
        (r) => ({ after: ids.encode(r.id), createdAt: r.created_at }),
      );
    },
  );
}
