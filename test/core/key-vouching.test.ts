// Which keys may pass the per-address block: those a lookup in this process found valid within the
// last hour, on either kind of store (synchronous lookups as on SQLite, awaited ones as on Postgres).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey } from '../../src/accounts/api-keys.js';
import { KeyResolver, VOUCH_MS } from '../../src/accounts/key-resolver.js';
import type { AuthRecord } from '../../src/credits/meter-store.js';

const record = (revoked = false): AuthRecord => ({ keyId: 'key_1', accountId: 'acc_1', planId: 'free', balance: 0, rateLimitPerMinute: null, revoked, activeKeys: 1 });

for (const kind of ['sync', 'async'] as const) {
  test(`a key vouches for an hour after a lookup found it valid, never when unknown or revoked (${kind} lookups)`, async () => {
    let now = Date.UTC(2026, 11, 5, 12);
    const byHash = new Map<string, AuthRecord>();
    const find = (hash: string) => byHash.get(hash);
    const meter = kind === 'sync' ? { findKey: async (h: string) => find(h), findKeySync: find } : { findKey: async (h: string) => find(h) };
    const keys = new KeyResolver(meter, { cacheMs: 0, now: () => now });
    const lookUp = async (key: string) => (kind === 'sync' ? keys.known(key)?.record : keys.resolve(key));
    // A new turn for each synchronous lookup, so none is answered from the turn's memo.
    const nextTurn = () => new Promise((r) => setImmediate(r));

    const good = generateApiKey();
    const unknown = generateApiKey();
    byHash.set(good.hash, record());
    assert.equal(keys.vouched(good.key), false, 'not before any lookup');
    assert.ok(await lookUp(good.key));
    assert.equal(await lookUp(unknown.key), undefined);
    assert.equal(keys.vouched(good.key), true);
    assert.equal(keys.vouched(unknown.key), false);
    assert.equal(keys.vouched('not a key'), false);

    now += VOUCH_MS - 1;
    assert.equal(keys.vouched(good.key), true);
    now += 1;
    assert.equal(keys.vouched(good.key), false, 'an hour after the last lookup that found it');
    await nextTurn();
    assert.ok(await lookUp(good.key));
    assert.equal(keys.vouched(good.key), true, 'vouched again by a new lookup');

    byHash.set(good.hash, record(true));
    await nextTurn();
    assert.equal((await lookUp(good.key))?.revoked, true);
    assert.equal(keys.vouched(good.key), false, 'a lookup that finds it revoked ends it');
  });
}
