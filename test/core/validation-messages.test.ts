// Validation failures read as something a caller can act on: a value outside a fixed set names the
// set, once, whether the schema says it as an enum or as a union of constants. The errors are
// Ajv's own, from the validator compiler the server uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { FastifyError } from 'fastify';
import { classifyError } from '../../src/http/error-handler.js';
import { validatorCompiler } from '../../src/http/validators.js';
import { startHarness } from '../helpers/harness.js';

function failure(schema: object, data: unknown) {
  const validate = validatorCompiler()({ schema, httpPart: 'querystring', method: 'GET', url: '/x' }) as ((d: unknown) => boolean) & { errors: unknown };
  assert.equal(validate(data), false);
  const err = Object.assign(new Error('invalid'), { validation: validate.errors, validationContext: 'querystring' }) as unknown as FastifyError;
  return classifyError(err).appError;
}

test('an enum names its values', () => {
  const e = failure(Type.Object({ sort: Type.Optional(Type.String({ enum: ['new', 'old'] })) }), { sort: 'top' });
  assert.equal(e.message, 'querystring.sort must be one of: new, old.');
  assert.deepEqual(e.details, { fields: [{ field: 'querystring.sort', message: 'must be one of: new, old' }] });
});

test('a union of constants names its values once', () => {
  const e = failure(Type.Object({ g: Type.Union([Type.Literal('hour'), Type.Literal('day'), Type.Literal('month')]) }), { g: 'week' });
  assert.deepEqual(e.details, { fields: [{ field: 'querystring.g', message: 'must be one of: hour, day, month' }] });
});

test('a lone constant names its value; other failures keep their message', () => {
  assert.equal(failure(Type.Object({ v: Type.Literal('1') }), { v: '2' }).message, 'querystring.v must be 1.');
  assert.equal(failure(Type.Object({ n: Type.Integer({ maximum: 5 }) }), { n: 9 }).message, 'querystring.n must be <= 5.');
});

test("the API's patterns are said in words: ids, handles, addresses", async () => {
  const h = await startHarness('sqlite');
  try {
    const a = await h.account();
    const cases: Array<[string, string]> = [
      ['/social/v1/tweets/12ab', 'params.id must be a numeric id of 1 to 19 digits.'],
      ['/social/v1/users/by/username/@ada', 'params.username must be a handle without the at-sign: letters, digits, _ . and - (at most 253 characters).'],
      ['/social/v1/users/1/tweets?sinceId=x', 'querystring.sinceId must be a numeric id of 1 to 19 digits.'],
      ['/wallet/v1/balance/0x12', 'params.address must be an address: 0x and 40 hexadecimal digits.'],
    ];
    for (const [url, message] of cases) {
      const r = await h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
      assert.equal(r.statusCode, 400, url);
      assert.equal((JSON.parse(r.body) as { error: { message: string } }).error.message, message, url);
    }
    const batch = await h.app.inject({ method: 'POST', url: '/social/v1/bulk-export/watchlist/batch', headers: { 'x-api-key': a.apiKey, 'content-type': 'application/json' }, payload: { items: [{ username: '@ada' }] } });
    assert.equal((JSON.parse(batch.body) as { error: { message: string } }).error.message, 'body.items.0.username must be a handle without the at-sign: letters, digits, _ . and - (at most 253 characters).');
  } finally {
    await h.close();
  }
});

test('a missing field is said to be required, named once', () => {
  const e = failure(Type.Object({ from: Type.String(), to: Type.String() }), { to: 'x' });
  assert.equal(e.message, 'querystring.from is required.');
  assert.deepEqual(e.details, { fields: [{ field: 'querystring.from', message: 'is required' }] });
});

test('an empty text where one is needed is said to be empty', () => {
  assert.equal(failure(Type.Object({ cursor: Type.String({ minLength: 1 }) }), { cursor: '' }).message, 'querystring.cursor must not be empty.');
  assert.equal(failure(Type.Object({ name: Type.String({ minLength: 3 }) }), { name: 'ab' }).message, 'querystring.name must NOT have fewer than 3 characters.');
});
