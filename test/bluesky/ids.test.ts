import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  compareIds,
  parseAtUri,
  postIdCandidate,
  postIdMs,
  tidMs,
  tieFromCid,
  tieFromUri,
  userIdCandidate,
} from '../../src/sources/bluesky/ids.js';
import { cidFor, tidFor } from './fake-appview.js';

describe('Bluesky numeric ids', () => {
  test('post ids are time-ordered, positive, at most 19 digits, and carry their millisecond', () => {
    const t = Date.parse('2025-06-01T12:00:00.123Z');
    const ids = [t - 1, t, t + 1, Date.parse('2109-01-01T00:00:00Z')].map((ms) => postIdCandidate(ms, tieFromUri(`at://x/${ms}`), 0));
    for (let i = 1; i < ids.length; i++) assert.ok(compareIds(ids[i - 1]!, ids[i]!) < 0);
    for (const id of ids) assert.match(id, /^[1-9][0-9]{0,18}$/);
    assert.equal(postIdMs(ids[1]!), t);
    assert.ok(BigInt(postIdCandidate(Number.MAX_SAFE_INTEGER, (1n << 21n) - 1n, 0)) <= (1n << 63n) - 1n);
    assert.equal(postIdCandidate(-5, 0n, 0), '1', 'before 1970: clamped, still positive');
    assert.equal(BigInt(postIdCandidate(t, 7n, 3)) - BigInt(postIdCandidate(t, 7n, 0)), 3n, 'a collision tries the next value');
    assert.equal(postIdMs('abc'), undefined);
  });

  test('tie bits follow the CID text order (the AppView breaks time ties by CID)', () => {
    const cids = Array.from({ length: 200 }, (_, i) => cidFor(`post ${i}`)).sort();
    const ties = cids.map((c) => tieFromCid(c)!);
    for (let i = 1; i < ties.length; i++) assert.ok(ties[i - 1]! <= ties[i]!, `${cids[i - 1]} ≤ ${cids[i]}`);
    assert.ok(ties.every((t) => t >= 0n && t < 1n << 21n));
    assert.equal(tieFromCid('not-a-cid'), undefined);
  });

  test('TID record keys give their time', () => {
    const ms = Date.parse('2024-11-20T10:11:12.345Z');
    assert.equal(tidMs(tidFor(ms, 17)), ms);
    assert.equal(tidMs('3n2xz2eekkk2u') !== undefined, true);
    assert.equal(tidMs('self'), undefined);
    assert.equal(tidMs('zzzzzzzzzzzzz'), undefined, 'the top bit of a TID is 0');
  });

  test('user ids are stable positive 63-bit numbers', () => {
    const a = userIdCandidate('did:plc:abc', 0);
    assert.equal(a, userIdCandidate('did:plc:abc', 0));
    assert.notEqual(a, userIdCandidate('did:plc:abd', 0));
    assert.ok(BigInt(a) > 0n && BigInt(a) < 1n << 63n);
    assert.equal(BigInt(userIdCandidate('did:plc:abc', 1)) - BigInt(a), 1n);
  });

  test('at:// URIs', () => {
    assert.deepEqual(parseAtUri('at://did:plc:x/app.bsky.feed.post/3k'), { did: 'did:plc:x', collection: 'app.bsky.feed.post', rkey: '3k' });
    assert.equal(parseAtUri('https://bsky.app/x'), undefined);
    assert.equal(parseAtUri('at://did:plc:x/app.bsky.feed.post'), undefined);
  });
});
