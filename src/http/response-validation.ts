import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import '../domain/formats.js';

// Used in tests: a response that does not match its declared schema fails loudly instead of being
// silently reshaped by the serializer.
/** Checks a payload against a route's response schemas; throws on a mismatch. */
export function responseChecker() {
  const cache = new WeakMap<object, TypeCheck<TSchema>>();
  return (url: string, responses: Record<string, TSchema>, statusCode: number, payload: unknown): void => {
    const code = String(statusCode);
    const schema = responses[code] ?? responses[`${code[0]}xx`];
    if (!schema) throw new Error(`Route ${url} has no response schema for status ${code}.`);
    let check = cache.get(schema);
    if (!check) {
      check = TypeCompiler.Compile(schema);
      cache.set(schema, check);
    }
    if (!check.Check(payload)) {
      const first = check.Errors(payload).First();
      throw new Error(`Response of ${url} (${code}) does not match its schema: ${first?.path} ${first?.message}`);
    }
  };
}

export function responseValidationHook() {
  const check = responseChecker();
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const responses = request.routeOptions.schema?.response as Record<string, TSchema> | undefined;
    if (responses) check(request.routeOptions.url ?? '', responses, reply.statusCode, payload);
    return payload;
  };
}
