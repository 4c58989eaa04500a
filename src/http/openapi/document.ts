// The OpenAPI document's frame (info, servers, tags, security, shared headers and parameters) and
// the pass that finishes what @fastify/swagger derives from the route schemas: named schemas as
// components, each operation's cost, headers and examples. docs/openapi.json is its output
// (npm run openapi); test/openapi checks the two agree.
import type { SwaggerOptions } from '@fastify/swagger';
import type { Config } from '../../config/config.js';
import { ErrorEnvelope } from '../schemas.js';
import { hoistNamedSchemas } from './components.js';
import { componentExamples } from './examples.js';
import { decorateOperations, type OpenApiDoc } from './operations.js';
import { sharedHeaders, sharedParameters } from './shared.js';

export const tags = [
  { name: 'social', description: 'Profiles, tweets, retweeters, timelines and communities, read from the configured data source (100 credits a call by default).' },
  {
    name: 'bulk-export',
    description: 'A watchlist of accounts managed in batches, the periodic crawl of those accounts, and exports of their stored tweets as gzip JSON Lines behind expiring links. Free.',
  },
  { name: 'account', description: 'The calling account: its credit balance, API keys, usage ledger and the plans on offer. Free.' },
  { name: 'wallet', description: 'Native-token balances of EVM addresses, read over JSON-RPC from the configured chains.' },
  { name: 'echo', description: 'A free call that checks a key and connectivity.' },
];

const description = `Credit-metered social-post data, bulk exports and account management.

Every call carries an API key in the \`X-API-Key\` header and costs the credits given in its description and in \`x-credit-cost\`; a call that fails is never charged. Every answer carries \`X-Request-Id\`; answers to keyed calls carry \`X-Credits-Charged\`, \`X-Credits-Remaining\` and \`RateLimit-Limit\`, \`RateLimit-Remaining\`, \`RateLimit-Reset\`. A 429 or 503 may carry \`Retry-After\` (seconds).

A POST may carry an \`Idempotency-Key\`: a retry with the same key and body within a day replays the first answer (with \`Idempotent-Replayed: true\`) instead of acting again.

Errors come in one envelope, \`{"error":{"code","message","details"},"meta":{"requestId"}}\`; each operation lists the codes it can answer, by status. Lists are paged with \`cursor\` and \`limit\`: pass a page's \`nextCursor\` as \`cursor\` until \`hasNextPage\` is false.`;

export function servers(config: Pick<Config, 'publicBaseUrl' | 'port'>) {
  if (config.publicBaseUrl) return [{ url: config.publicBaseUrl.replace(/\/+$/, ''), description: 'This gateway' }];
  // Relative first: the gateway that serves this document, wherever it runs.
  return [
    { url: '/', description: 'The gateway serving this document (set PUBLIC_BASE_URL to name it here)' },
    { url: `http://127.0.0.1:${config.port}`, description: 'A gateway started on this machine with npm start' },
  ];
}

export function openapiOptions(config: Pick<Config, 'publicBaseUrl' | 'port'>): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Social Data Gateway API',
        version: '1.0.0',
        description,
        license: { name: 'MIT', identifier: 'MIT' },
        contact: { name: 'Social Data Gateway' },
      },
      servers: servers(config),
      tags,
      components: {
        securitySchemes: {
          ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key of the calling account (sdg_live_…); create more with POST /api/v1/api-keys.' },
        },
        // Plain JSON here; its checks are redocly and spectral (npm run lint:openapi).
        schemas: { ErrorEnvelope: JSON.parse(JSON.stringify(ErrorEnvelope)) },
        headers: sharedHeaders as never,
        parameters: sharedParameters as never,
      },
      security: [{ ApiKey: [] }],
    },
    transformObject: (input) => finishDocument((input as unknown as { openapiObject: OpenApiDoc }).openapiObject) as never,
  };
}

/** What @fastify/swagger derived, finished; the key order is fixed, so the text is stable. */
export function finishDocument(doc: OpenApiDoc): OpenApiDoc {
  const schemas = hoistNamedSchemas(doc);
  componentExamples(schemas);
  decorateOperations(doc, schemas);
  const { openapi, info, servers: srv, security, tags: t, paths, components, ...rest } = doc;
  return {
    openapi,
    info,
    servers: srv,
    security,
    tags: t,
    paths: sortKeys(paths),
    components: { ...components, schemas: sortKeys(schemas), responses: sortKeys((components?.responses ?? {}) as Record<string, unknown>) },
    ...rest,
  };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
