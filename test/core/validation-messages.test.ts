// Validation failures read as something a caller can act on: a value outside a fixed set names the
// set, once, whether the schema says it as an enum or as a union of constants. The errors are
// Ajv's own, from the validator compiler the server uses.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import type { FastifyError } from 'fastify';
import { classifyError } from '../../src/http/error-handler.js';
import { validatorCompiler } from '../../src/http/validators.js';

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
