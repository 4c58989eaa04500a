import { Ajv, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// Query strings, paths and headers are text, so they are coerced to the schema's types ("20" → 20);
// JSON bodies are not: {"name": 5} where a string is wanted is a client's mistake and gets a 400.
function makeAjv(coerce: boolean): Ajv {
  const opts: Options = { coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false };
  const ajv = new Ajv(opts);
  addFormats.default(ajv);
  return ajv;
}

export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const body = makeAjv(false);
  const text = makeAjv(true);
  return ({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema as object);
}
