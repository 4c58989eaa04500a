// Per operation: the credit cost in words, the headers of each answer, the Idempotency-Key of a POST,
// and an example of each request body and answer (one per error code).
import type { ErrorCode } from '../../errors/app-error.js';
import { answerExample, errorExample, exampleOf } from './examples.js';
import type { HeaderName } from './shared.js';

type Json = Record<string, unknown>;

export interface OpenApiDoc {
  openapi: string;
  info: Json;
  servers?: Json[];
  security?: Json[];
  tags?: Json[];
  paths: Record<string, Record<string, Json>>;
  components?: Json;
  [key: string]: unknown;
}

const ref = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });
const metered: HeaderName[] = ['X-Credits-Charged', 'X-Credits-Remaining', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Cache-Control'];

/** The headers of an answer: credits and rate limit once the key is known (not on a 401). */
function headersOf(status: string, method: string): Record<string, unknown> {
  const names: HeaderName[] = ['X-Request-Id'];
  if (status !== '401') names.push(...metered);
  if (status === '429' || status === '503') names.push('Retry-After');
  if (status.startsWith('2') && method === 'post') names.push('Idempotent-Replayed');
  return Object.fromEntries(names.map((n) => [n, ref(n)]));
}

function costText(cost: number): string {
  return cost > 0
    ? `**Cost:** ${cost} credits per successful (2xx) call; an error or an idempotent replay is not charged. Answers 402 insufficient_credits when the balance, less what the account's calls in progress hold, is below ${cost}.`
    : '**Cost:** free (0 credits).';
}

/** The codes an error response's schema allows (see errorResponse in src/http/schemas.ts). */
function codesOf(schema: Json | undefined): ErrorCode[] {
  const narrow = (schema?.allOf as Json[] | undefined)?.[1];
  const code = ((narrow?.properties as Json | undefined)?.error as Json | undefined)?.properties as Json | undefined;
  const c = code?.code as Json | undefined;
  return (c?.enum as ErrorCode[] | undefined) ?? (c?.const !== undefined ? [c.const as ErrorCode] : []);
}

// A reader meets what an operation does before its parameters and answers.
const keyOrder = ['operationId', 'summary', 'description', 'tags', 'x-credit-cost', 'security', 'parameters', 'requestBody', 'responses'];
const byKeyOrder = (op: Json): Json => {
  const rank = (k: string) => (keyOrder.includes(k) ? keyOrder.indexOf(k) : keyOrder.length);
  return Object.fromEntries(Object.entries(op).sort(([a], [b]) => rank(a) - rank(b)));
};

const pascal = (code: string) => code.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

/**
 * An error response is the same wherever its codes are (its status, schema, headers and examples
 * follow from them): it is declared once under components.responses, named for its codes
 * (InvalidApiKeyOrMissingApiKey), and referred to by $ref.
 */
function sharedResponse(responses: Record<string, Json>, codes: ErrorCode[], response: Json): Json {
  const name = codes.map(pascal).join('Or');
  const before = responses[name];
  if (before && JSON.stringify(before) !== JSON.stringify(response)) throw new Error(`Two different error responses would be named ${name}.`);
  responses[name] = response;
  return { $ref: `#/components/responses/${name}` };
}

export function decorateOperations(doc: OpenApiDoc, schemas: Record<string, Json>): void {
  const components = (doc.components ??= {});
  const shared = ((components.responses as Record<string, Json> | undefined) ??= {});
  for (const item of Object.values(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const cost = typeof op['x-credit-cost'] === 'number' ? op['x-credit-cost'] : 0;
      op.description = [op.description, costText(cost)].filter(Boolean).join('\n\n');
      if (method === 'post') op.parameters = [...((op.parameters as Json[] | undefined) ?? []), { $ref: '#/components/parameters/IdempotencyKey' }];
      for (const p of (op.parameters as Json[] | undefined) ?? []) {
        if (p.schema && p.example === undefined) p.example = exampleOf(p.schema as Json, schemas);
      }
      const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
      for (const media of Object.values(body ?? {})) if (media.example === undefined) media.example = exampleOf(media.schema as Json, schemas);
      const responses = op.responses as Record<string, Json>;
      for (const [status, response] of Object.entries(responses)) {
        response.headers = { ...headersOf(status, method), ...((response.headers as Json | undefined) ?? {}) };
        let codes: ErrorCode[] = [];
        for (const media of Object.values((response.content as Record<string, Json> | undefined) ?? {})) {
          if (status.startsWith('2')) {
            if (media.example === undefined) media.example = answerExample(op.operationId, exampleOf(media.schema as Json, schemas));
          } else {
            // Every error answer is the envelope; the operation's own schema narrows its codes.
            media.schema = { allOf: [{ $ref: '#/components/schemas/ErrorEnvelope' }, media.schema] };
            codes = codesOf(media.schema as Json);
            media.examples = Object.fromEntries(codes.map((code) => [code, errorExample(code)]));
          }
        }
        if (codes.length > 0) responses[status] = sharedResponse(shared, codes, response);
      }
      item[method] = byKeyOrder(op);
    }
  }
}
