import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { LazyCompiles } from './lazy-compile.js';

// Query strings, paths and headers are text, so they are coerced to the schema's types ("20" → 20);
// JSON bodies are not: {"name": 5} where a string is wanted is a client's mistake and gets a 400.
function makeAjv(coerce: boolean, allErrors: boolean): Ajv {
  const opts: Options = { coerceTypes: coerce ? 'array' : false, useDefaults: true, removeAdditional: false, allErrors, strict: false };
  const ajv = new Ajv(opts);
  addFormats.default(ajv);
  return ajv;
}

/**
 * A 400 names each offending field (contract, section 3), which takes Ajv's `allErrors`; but
 * `allErrors` checks a body to its end whatever it holds, and a 1 MB body of 340,000 wrong items
 * cost half a second of the event loop for one 400. So each part is checked first by a validator
 * that stops at the first error (what every valid request runs), and only a value of at most
 * FULL_CHECK_VALUES values (the largest valid body, 100 watchlist items, holds about 200) is checked again for all
 * its errors; a larger one is named by its first.
 */
export const FULL_CHECK_VALUES = 2_000;

export type LazyValidatorCompiler = FastifySchemaCompiler<unknown> & Pick<LazyCompiles, 'compileAll'>;

/**
 * Each route part's validator is compiled on its first request, not when the server starts, for
 * routes a process may never serve. `compileAll` lets a test compile them all at once
 * (test/openapi/schemas-compile.test.ts).
 */
export function validatorCompiler(): LazyValidatorCompiler {
  const ajvs = new Map<string, Ajv>();
  const ajvFor = (httpPart: string | undefined, allErrors: boolean) => {
    const coerce = httpPart !== 'body';
    const name = `${coerce}/${allErrors}`;
    let ajv = ajvs.get(name);
    if (!ajv) ajvs.set(name, (ajv = makeAjv(coerce, allErrors)));
    return ajv;
  };
  const lazy = new LazyCompiles();
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
    const firstError = lazy.defer(() => ajvFor(httpPart, false).compile(schema as object));
    const allErrors = lazy.defer(() => ajvFor(httpPart, true).compile(schema as object));
    const numeric = httpPart === 'body' ? [] : numericFields(schema);
    // Fastify reads `errors` off the function it was given, so it is copied from the compiled one.
    const validate = Object.assign(
      (data: unknown) => {
        const wrong = numeric.length > 0 ? notDecimal(data, numeric) : undefined;
        let check = firstError();
        let ok = check(data);
        // Ajv's coercion and defaults have changed `data` in place, which checking it again repeats.
        if (!ok && !hasMoreValuesThan(data, FULL_CHECK_VALUES)) {
          check = allErrors();
          ok = check(data);
        }
        if (wrong === undefined) {
          validate.errors = check.errors;
          return ok;
        }
        // Ajv took the non-decimal numbers as numbers: their errors replace its own for those fields.
        const at = new Set(wrong.map((w) => w.instancePath));
        validate.errors = [...wrong, ...(check.errors ?? []).filter((e) => !at.has(e.instancePath))];
        return false;
      },
      { errors: null as ValidateFunction['errors'] },
    );
    return validate;
  };
  return Object.assign(compiler, { compileAll: () => lazy.compileAll() });
}

/** Whether `data` holds more than `limit` values (object keys count too), reading at most about `limit` of them. */
export function hasMoreValuesThan(data: unknown, limit: number): boolean {
  let left = limit;
  const stack: unknown[] = [data];
  while (stack.length > 0) {
    const v = stack.pop();
    if (--left < 0) return true;
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      if (v.length > left) return true;
      for (const x of v) stack.push(x);
    } else {
      const values = Object.values(v);
      // A key is a value of its own (an unknown one is an error of its own).
      left -= values.length;
      if (left < 0) return true;
      for (const x of values) stack.push(x);
    }
  }
  return false;
}

// Ajv coerces a text value to a number as JavaScript does: `limit=0x10` became 16, `1e1` 10, ` 2`
// 2. A number in a query string or a path is written in decimal digits, as the contract's integers
// are; anything else is refused (read before Ajv coerces it), in Ajv's own words for a wrong type.
const DECIMAL: Record<'integer' | 'number', RegExp> = { integer: /^-?[0-9]+$/, number: /^-?[0-9]+(\.[0-9]+)?$/ };

interface NumericField {
  name: string;
  type: 'integer' | 'number';
}

/** The top-level properties of an object schema that hold a number. */
function numericFields(schema: unknown): NumericField[] {
  const props = (schema as { properties?: Record<string, { type?: unknown }> } | undefined)?.properties;
  if (!props) return [];
  return Object.entries(props).flatMap(([name, p]) => (p.type === 'integer' || p.type === 'number' ? [{ name, type: p.type }] : []));
}

type AjvError = NonNullable<ValidateFunction['errors']>[number];

/** An error for each numeric field given as text that is not decimal digits (checked before Ajv coerces it); undefined when none. */
function notDecimal(data: unknown, fields: NumericField[]): AjvError[] | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  let out: AjvError[] | undefined;
  for (const { name, type } of fields) {
    const v = (data as Record<string, unknown>)[name];
    const values = Array.isArray(v) ? v : [v];
    if (values.some((x) => typeof x === 'string' && !DECIMAL[type].test(x))) {
      (out ??= []).push({ keyword: 'type', instancePath: `/${name}`, schemaPath: `#/properties/${name}/type`, params: { type }, message: `must be ${type}` });
    }
  }
  return out;
}
