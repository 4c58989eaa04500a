import { randomBytes } from 'node:crypto';
import type { Store } from '../db/connect.js';
import { OpaqueIds } from '../domain/opaque-ids.js';
import type { SigningSecrets } from '../domain/signing-secrets.js';

/** Inserts the setting unless some process did first; the value every process then uses. */
async function settingOnce(store: Store, key: string, value: string): Promise<string> {
  await store.db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
  const row = await store.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirstOrThrow();
  return row.value;
}

/** The signing secret: SECRET when set, else one random value created once and shared by every process through the store. */
export async function resolveSecret(store: Store, configured: string | undefined): Promise<string> {
  return configured ?? settingOnce(store, 'signing_secret', randomBytes(32).toString('base64url'));
}

/** The secrets that sign (the current one) and are accepted (also SECRET_PREVIOUS during a rotation). */
export async function resolveSecrets(store: Store, configured: string | undefined, previous: string | undefined): Promise<SigningSecrets> {
  const current = await resolveSecret(store, configured);
  return { current, previous: previous !== undefined && previous !== current ? [previous] : [] };
}

/**
 * The ledger's public ids (led_…). Their key is stored the first time a release that stores it starts,
 * derived from the secret of that moment, so the ids given out before stay the same; after that a
 * change of SECRET leaves them alone (they are identities a client may keep, not signatures).
 */
export async function ledgerIdsFor(store: Store, secret: string): Promise<OpaqueIds> {
  const key = await settingOnce(store, 'ledger_id_key', OpaqueIds.keyFrom(secret, 'led').toString('base64url'));
  return new OpaqueIds(Buffer.from(key, 'base64url'), 'led');
}
