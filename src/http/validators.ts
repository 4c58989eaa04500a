import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { LazyCompiles } from './lazy-compile.js';

// Query strings, paths and headers are text, so they are coerced to the schema's types ("20" → 20);
// JSON bodies are not: {"name": 5} where a string is wanted is a client's mistake and gets a 400.
function makeAjv(coerce: boolean): Ajv {
  const opts: Options = { coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: false, allErrors: false, strict: false };
  const ajv = new Ajv(opts);
  addFormats.default(ajv);
  return ajv;
}

export type LazyValidatorCompiler = FastifySchemaCompiler<unknown> & Pick<LazyCompiles, 'compileAll'>;

/**
 * Each route part's validator is compiled on its first request, not when the server starts, for
 * routes a process may never serve. `compileAll` lets a test compile them all at once
 * (test/openapi/schemas-compile.test.ts).
 */
export function validatorCompiler(): LazyValidatorCompiler {
  let body: Ajv | undefined;
  let text: Ajv | undefined;
  const ajvFor = (httpPart: string | undefined) => (httpPart === 'body' ? (body ??= makeAjv(false)) : (text ??= makeAjv(true)));
  const lazy = new LazyCompiles();
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    const compiled = lazy.defer(() => ajvFor(httpPart).compile(schema as object));
    // Fastify reads `errors` off the function it was given, so it is copied from the compiled one.
    const validate = Object.assign(
      (data: unknown) => {
        const check = compiled();
        const ok = check(data);
        validate.errors = check.errors;
        return ok;
      },
      { errors: null as ValidateFunction['errors'] },
    );
    return validate;
  };
  return Object.assign(compiler, { compileAll: () => lazy.compileAll() });
}
