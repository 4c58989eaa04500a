import { randomBytes } from 'node:crypto';
import type { Store } from '../db/connect.js';

/** The signing secret: SECRET when set, else one random value created once and shared by every process through the store. */
export async function resolveSecret(store: Store, configured: string | undefined): Promise<string> {
  if (configured) return configured;
  await store.db
    .insertInto('settings')
    .values({ key: 'signing_secret', value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await store.db.selectFrom('settings').select('value').where('key', '=', 'signing_secret').executeTakeFirstOrThrow();
  return row.value;
}
