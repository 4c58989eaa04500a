import { createHash } from 'node:crypto';
import { nowIso } from '../domain/ids.js';
import { AppError } from '../errors/app-error.js';
import type { Store } from '../db/connect.js';

// Idempotency-Key on POST: the first request claims the key; a repeat with the same body replays the
// stored response (and charges nothing); a different body, or a repeat while the first is running, is 409.

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj).sort().map((k) => `${JSON.stringify(k)}:${stable(obj[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Claims the request's Idempotency-Key. Returns the stored response when this is a replay; throws
 * idempotency_conflict when the key is in use or was used for another request.
 */
/** One POST's Idempotency-Key: whose it is, the raw header, and what the request was. */
export interface IdempotentCall {
  accountId: string;
  /** The header as sent (checked here). */
  key: string | string[];
  /** The route pattern and parsed body: a replay must repeat both. */
  route: string;
  body: unknown;
}

export type ClaimResult = { claimed: string } | { replay: { statusCode: number; body: string } };

export async function claimIdempotencyKey(store: Pick<Store, 'db'>, ttlHours: number, call: IdempotentCall): Promise<ClaimResult> {
  const raw = call.key;
  const ttlMs = ttlHours * 3_600_000;
  const key = Array.isArray(raw) ? raw[0]! : raw;
  if (!KEY_RE.test(key)) throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters (no spaces).', { fields: [{ field: 'headers.idempotency-key', message: 'is malformed' }] });
  const hash = createHash('sha256').update(`${call.route}\0${stable(call.body)}`).digest('hex');
  const db = store.db;
  const accountId = call.accountId;
  // Expired records go; so does a claim whose request died with its process (no answer after 15 min).
  const now = Date.now();
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .where((eb) =>
      eb.or([
        eb('created_at', '<', new Date(now - ttlMs).toISOString()),
        eb.and([eb('status_code', 'is', null), eb('created_at', '<', new Date(now - 15 * 60_000).toISOString())]),
      ]),
    )
    .execute();
  const claimed = await db
    .insertInto('idempotency_keys')
    .values({ account_id: accountId, key, request_hash: hash, status_code: null, response_body: null, created_at: nowIso() })
    .onConflict((oc) => oc.columns(['account_id', 'key']).doNothing())
    .executeTakeFirst();
  if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 1) return { claimed: key };
  const prior = await db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
  if (!prior || prior.request_hash !== hash) {
    throw new AppError('idempotency_conflict', 'This Idempotency-Key was already used with a different request; use a new key.');
  }
  if (prior.status_code === null || prior.response_body === null) {
    throw new AppError('idempotency_conflict', 'A request with this Idempotency-Key is still being processed; retry shortly.');
  }
  return { replay: { statusCode: prior.status_code, body: prior.response_body } };
}

/**
 * Keeps a success for replays (only successes are kept: a failure changed nothing and frees its key).
 * The request still holds its claim afterwards: should its charge fail, forgetIdempotencyKey drops both.
 */
export async function saveIdempotentResponse(store: Pick<Store, 'db'>, accountId: string, key: string, statusCode: number, body: string): Promise<void> {
  await store.db
    .updateTable('idempotency_keys')
    .set({ status_code: statusCode, response_body: body })
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .execute();
}

/**
 * Frees the claim of a request that failed, with the answer it may have kept before failing, so the
 * client may retry with the same key. Only the claiming request calls this, while it holds the claim.
 */
export async function forgetIdempotencyKey(store: Pick<Store, 'db'>, accountId: string, key: string): Promise<void> {
  await store.db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('key', '=', key).execute();
}
