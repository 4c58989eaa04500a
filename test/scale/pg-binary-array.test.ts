// Arrays sent in Postgres's binary format (src/db/pg-binary-array.ts), read back by a real Postgres:
// what the group charge's ledger columns hold must be what was charged. Needs TEST_DATABASE_URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { int8Array, textArray } from '../../src/db/pg-binary-array.js';
import { createPostgresSchema } from '../helpers/backends.js';

const pgUrl = process.env.TEST_DATABASE_URL;

test('a fraction or an integer beyond 2^53 is refused before anything is sent', () => {
  assert.throws(() => int8Array([1, 1.5]), RangeError);
  assert.throws(() => int8Array([2 ** 53]), RangeError);
  assert.throws(() => int8Array([Number.NaN]), RangeError);
});

// The layout read back by hand (as array_recv reads it): each element must hold exactly the bytes
// Node's UTF-8 encoder gives (lone surrogates included), whatever mix of characters it has.
test('text elements hold the UTF-8 bytes Buffer.from gives, for random mixes of 1- to 4-byte characters, lone surrogates and nulls', () => {
  const chars = ['a', 'Z', '\u007f', '\u0080', 'é', '☕', '𝄞', '\uD800', '\uDC00', '"', '\\'];
  let seed = 7;
  const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
  for (let k = 0; k < 2_000; k++) {
    const values = Array.from({ length: rand(6) }, () => (rand(10) === 0 ? null : Array.from({ length: rand(12) }, () => chars[rand(chars.length)]).join('')));
    const b = textArray(values);
    assert.deepEqual([b.readInt32BE(0), b.readInt32BE(4), b.readInt32BE(8), b.readInt32BE(12), b.readInt32BE(16)], [1, values.includes(null) ? 1 : 0, 25, values.length, 1]);
    let at = 20;
    for (const v of values) {
      const n = b.readInt32BE(at);
      at += 4;
      if (v === null) {
        assert.equal(n, -1);
        continue;
      }
      assert.deepEqual(b.subarray(at, at + n), Buffer.from(v, 'utf8'));
      at += n;
    }
    assert.equal(at, b.length);
  }
});

describe('binary array parameters (postgres)', { skip: !pgUrl }, () => {
  let schema: { url: string; drop(): Promise<void> };
  let client: pg.Client;
  before(async () => {
    schema = await createPostgresSchema(pgUrl!);
    client = new pg.Client(schema.url);
    await client.connect();
  });
  after(async () => {
    await client.end();
    await schema.drop();
  });

  // Postgres answers each element as text (the elements' own output functions), so nothing on the way back is binary.
  const roundTrip = async (texts: Array<string | null>, ints: number[]) => {
    const r = await client.query<{ t: Array<string | null>; i: string[]; n: number; m: number }>({
      name: 'binary_arrays',
      text: 'select $1::text[] as t, array(select x::text from unnest($2::bigint[]) as x) as i, cardinality($1::text[]) as n, cardinality($2::bigint[]) as m',
      values: [textArray(texts), int8Array(ints)],
    });
    return r.rows[0]!;
  };

  test('text elements: empty, null, quotes, braces, commas, backslashes and characters beyond the BMP', async () => {
    const texts = ['req_abc', '', null, 'a "quoted", {braced} \\ text', 'GET /social/v1/tweets/{id}', 'café ☕ 𝄞', 'NULL'];
    const r = await roundTrip(texts, [1]);
    assert.deepEqual(r.t, texts);
    assert.equal(r.n, texts.length);
  });

  // The buffer is sized for 3 bytes a UTF-16 unit and ASCII is copied by hand: the worst cases of
  // each, and a long ASCII run before the first character that is not.
  test('text elements at the size bound: 3-byte and 4-byte characters only, and a long ASCII prefix', async () => {
    const texts = ['☕'.repeat(300), '𝄞'.repeat(300), `${'x'.repeat(10_000)}é`, 'é', 'plain ascii after'];
    const r = await roundTrip(texts, [1]);
    assert.deepEqual(r.t, texts);
  });

  test('bigint elements: zero, negatives, both sides of 2^32 and the largest safe integers', async () => {
    const ints = [0, 1, -1, 100, -100, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 32 + 5, -(2 ** 32) - 1, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
    const r = await roundTrip(['x'], ints);
    assert.deepEqual(r.i, ints.map(String));
    assert.equal(r.m, ints.length);
  });

  test('empty arrays', async () => {
    const r = await roundTrip([], []);
    assert.deepEqual(r.t, []);
    assert.deepEqual(r.i, []);
  });

  test('an element type other than the parameter’s is refused by Postgres, not read as something else', async () => {
    await assert.rejects(client.query('select $1::text[] as t', [int8Array([1])]), /element type/);
  });
});
