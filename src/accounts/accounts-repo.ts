import { sql, type Kysely } from 'kysely';
import { newId, nowIso } from '../domain/ids.js';
import type { Database } from '../db/schema.js';
import { generateApiKey } from './api-keys.js';

export interface ApiKeyView {
  id: string;
  name: string | null;
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

export async function createAccount(
  db: Kysely<Database>,
  input: { name: string; planId: string; rateLimitPerMinute?: number | null },
): Promise<{ accountId: string }> {
  const accountId = newId('acc');
  await db
    .insertInto('accounts')
    .values({
      id: accountId,
      name: input.name,
      plan_id: input.planId,
      balance: 0,
      reserved: 0,
      rate_limit_per_minute: input.rateLimitPerMinute ?? null,
      created_at: nowIso(),
    })
    .execute();
  return { accountId };
}

/**
 * Inside a transaction: takes the account's row lock (a row lock on Postgres, the write lock on
 * SQLite) before a check of what the account holds, so that two requests cannot both find room
 * for one more (a count and then an insert let 30 concurrent requests on two processes make 7 keys
 * against a limit of 5).
 */
export async function lockAccountRow(trx: Kysely<Database>, accountId: string): Promise<void> {
  await trx.updateTable('accounts').set({ plan_id: sql`plan_id` }).where('id', '=', accountId).execute();
}

export interface NewKey {
  id: string;
  /** The secret, shown once. */
  key: string;
  prefix: string;
  createdAt: string;
  name: string | null;
}

export async function createKey(
  db: Kysely<Database>,
  accountId: string,
  name: string | null,
): Promise<NewKey> {
  const { key, prefix, hash } = generateApiKey();
  const id = newId('key');
  const createdAt = nowIso();
  await db.insertInto('api_keys').values({ id, account_id: accountId, name, prefix, key_hash: hash, created_at: createdAt, revoked_at: null }).execute();
  return { id, key, prefix, createdAt, name };
}

export interface KeyPosition {
  createdAt: string;
  id: string;
}

/** Newest first, keyset on (created_at, id); `limit + 1` rows (the extra one says a next page exists). */
/** Which of an account's keys a page lists: all of them, or only the active or the revoked ones. */
export type KeyStatus = 'active' | 'revoked';

export async function keysPage(db: Kysely<Database>, accountId: string, limit: number, before?: KeyPosition, status?: KeyStatus): Promise<ApiKeyView[]> {
  let q = db.selectFrom('api_keys').select(['id', 'name', 'prefix', 'created_at', 'revoked_at']).where('account_id', '=', accountId);
  if (status) q = q.where('revoked_at', status === 'active' ? 'is' : 'is not', null);
  if (before) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(before.createdAt, before.id)));
  const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
  return rows.map((r) => ({ id: r.id, name: r.name, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at }));
}

/** Revokes a key of the account (or of any account when accountId is undefined). Returns the key, or undefined if none. */
export async function revokeKey(db: Kysely<Database>, keyId: string, accountId?: string): Promise<ApiKeyView | undefined> {
  let q = db.updateTable('api_keys').set({ revoked_at: nowIso() }).where('id', '=', keyId).where('revoked_at', 'is', null);
  if (accountId !== undefined) q = q.where('account_id', '=', accountId);
  await q.execute();
  let s = db.selectFrom('api_keys').select(['id', 'name', 'prefix', 'created_at', 'revoked_at']).where('id', '=', keyId);
  if (accountId !== undefined) s = s.where('account_id', '=', accountId);
  const r = await s.executeTakeFirst();
  return r && { id: r.id, name: r.name, prefix: r.prefix, createdAt: r.created_at, revokedAt: r.revoked_at };
}

/** Revokes every active key of the account at once (its access is cut until a new key is made); the ids revoked. */
export async function revokeAllKeys(db: Kysely<Database>, accountId: string): Promise<{ ids: string[]; revokedAt: string }> {
  const revokedAt = nowIso();
  const rows = await db.updateTable('api_keys').set({ revoked_at: revokedAt }).where('account_id', '=', accountId).where('revoked_at', 'is', null).returning('id').execute();
  return { ids: rows.map((r) => r.id).sort(), revokedAt };
}

export async function getAccount(db: Kysely<Database>, accountId: string) {
  return db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
}

/**
 * Changes an account's name, plan or rate-limit override (null: the plan's). Only the fields given;
 * returns the account as it is after, or undefined when there is none. Credits are not touched: a
 * new plan's credits are granted apart (sdg credits grant).
 */
export async function updateAccount(
  db: Kysely<Database>,
  accountId: string,
  change: { name?: string; planId?: string; rateLimitPerMinute?: number | null },
) {
  const set: { name?: string; plan_id?: string; rate_limit_per_minute?: number | null } = {};
  if (change.name !== undefined) set.name = change.name;
  if (change.planId !== undefined) set.plan_id = change.planId;
  if (change.rateLimitPerMinute !== undefined) set.rate_limit_per_minute = change.rateLimitPerMinute;
  if (Object.keys(set).length > 0) await db.updateTable('accounts').set(set).where('id', '=', accountId).execute();
  return getAccount(db, accountId);
}

export async function listAccounts(db: Kysely<Database>) {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').execute();
}
