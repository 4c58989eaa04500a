import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AffineIds, decodeTweetId, encodeTweetId, idBound, MAX_TS, tweetLow } from '../../src/sources/demo/ids.js';
import { makeNet } from '../../src/sources/demo/network.js';
import { fmix32, hash3, unit } from '../../src/sources/demo/prng.js';
import { parseUserId, parseUsername, usernameOf, displayHandle, createdMsOf, poolSize } from '../../src/sources/demo/users.js';

test('tweet ids: the Number-limb encoding equals ts << 23 | user << 3 | seq computed with BigInt', () => {
  const cases: Array<[number, number, number]> = [
    [0, 0, 0],
    [0, 0, 1],
    [1, 0, 0],
    [999_999, 1_048_575, 7],
    [1_000_000, 123, 4],
    [170_000_000_000, 199_999, 7],
    [MAX_TS, 1_048_575, 7],
  ];
  let x = 12345;
  for (let i = 0; i < 2000; i++) {
    x = fmix32(x + i);
    cases.push([Math.floor(unit(x) * MAX_TS), fmix32(x) % 1_048_576, x % 8]);
  }
  for (const [ts, user, seq] of cases) {
    const want = ((BigInt(ts) << 23n) | (BigInt(user) << 3n) | BigInt(seq)).toString();
    const id = encodeTweetId(ts, tweetLow(user, seq));
    assert.equal(id, want, `ts=${ts} user=${user} seq=${seq}`);
    assert.deepEqual(decodeTweetId(id), { ts, low: tweetLow(user, seq) });
  }
  assert.ok(BigInt(encodeTweetId(MAX_TS, tweetLow(1_048_575, 7))) < 2n ** 63n, 'ids fit a signed 64-bit integer');
});

test('tweet ids increase with time', () => {
  const a = encodeTweetId(1_000_000_000, tweetLow(500_000, 7));
  const b = encodeTweetId(1_000_000_001, tweetLow(0, 0));
  assert.ok(BigInt(a) < BigInt(b));
});

test('malformed tweet ids do not decode', () => {
  for (const bad of ['', 'abc', '01', '-1', '1e5', '1.5', ' 1', '9223372036854775808', '123456789012345678901', '１２']) {
    assert.equal(decodeTweetId(bad), undefined, JSON.stringify(bad));
  }
  assert.deepEqual(decodeTweetId('9223372036854775807'), { ts: 2 ** 40 - 1, low: 2 ** 23 - 1 });
  assert.equal(idBound('x1'), undefined);
  assert.equal(idBound('99999999999999999999999')?.ts, Number.MAX_SAFE_INTEGER, 'huge ids bound above every tweet');
});

test('affine ids are a bijection that rejects foreign ids', () => {
  const ids = new AffineIds(13, 1_500_000_000_000_000, 0x1a35, 4321);
  const seen = new Set<string>();
  for (let i = 0; i < 8192; i++) {
    const id = ids.encode(i);
    assert.match(id, /^[1-9][0-9]{15}$/);
    assert.equal(ids.decode(id), i);
    seen.add(id);
  }
  assert.equal(seen.size, 8192);
  for (const bad of ['1', '01500000000000000', '1500000000008192', '1499999999999999', 'abc', '']) assert.equal(ids.decode(bad), -1, bad);
});

test('user ids and usernames invert to the index; usernames are unique and case-insensitive', () => {
  const net = makeNet(1, 200_000, Date.parse('2020-01-01T00:00:00Z'));
  const names = new Set<string>();
  for (let i = 0; i < 200_000; i += 97) {
    const id = net.userIds.encode(i);
    assert.equal(parseUserId(net, id), i);
    const name = usernameOf(net, i);
    assert.match(name, /^[a-z]+_[0-9]+$/);
    assert.equal(name, displayHandle(net, i).toLowerCase());
    assert.equal(parseUsername(net, name), i);
    assert.equal(parseUsername(net, name.toUpperCase()), i);
    assert.equal(parseUsername(net, `@${displayHandle(net, i)}`), i);
    names.add(name);
  }
  assert.equal(names.size, Math.ceil(200_000 / 97));
  const other = usernameOf(net, 5).replace(/_5$/, '_6');
  if (other !== usernameOf(net, 6)) assert.equal(parseUsername(net, other), -1, 'a handle with the wrong index');
  assert.equal(parseUsername(net, 'quietfalcon_200000'), -1, 'index beyond the network');
  assert.equal(parseUsername(net, 'nobody'), -1);
  assert.equal(parseUserId(net, '1'), -1);
  // index >= userCount within the id space
  let beyond = -1;
  for (let p = 0; p < 2 ** 20 && beyond < 0; p++) {
    const id = String(1_300_000_000_000_000 + p);
    if (net.userIds.decode(id) >= 200_000) beyond = p;
  }
  assert.equal(parseUserId(net, String(1_300_000_000_000_000 + beyond)), -1);
});

test('different seeds give different ids and handles', () => {
  const a = makeNet(1, 200_000, 0);
  const b = makeNet(2, 200_000, 0);
  assert.notEqual(a.userIds.encode(10), b.userIds.encode(10));
  let same = 0;
  for (let i = 0; i < 100; i++) if (usernameOf(a, i) === usernameOf(b, i)) same++;
  assert.ok(same < 20, `only ${same} handles coincide`);
});

test('accounts are created in index order and poolSize is the exact prefix', () => {
  const net = makeNet(3, 10_000, Date.parse('2020-01-01T00:00:00Z'));
  for (let i = 1; i < 10_000; i++) assert.ok(createdMsOf(net, i) > createdMsOf(net, i - 1));
  for (const i of [0, 1, 500, 9_998, 9_999]) {
    const t = createdMsOf(net, i);
    assert.equal(poolSize(net, t), i + 1);
    assert.equal(poolSize(net, t - 1), i);
  }
  assert.equal(poolSize(net, net.epochMs - 1), 0);
  assert.equal(poolSize(net, Date.parse('2030-01-01T00:00:00Z')), 10_000);
});

test('hashes are deterministic and roughly uniform', () => {
  assert.equal(hash3(1, 2, 3), hash3(1, 2, 3));
  assert.notEqual(hash3(1, 2, 3), hash3(1, 2, 4));
  assert.notEqual(hash3(1, 2, 2 ** 33), hash3(1, 2, 2 ** 34), 'high words count');
  let sum = 0;
  const n = 100_000;
  for (let i = 0; i < n; i++) sum += unit(hash3(7, 1, i));
  assert.ok(Math.abs(sum / n - 0.5) < 0.01);
});
