// Builds the Fastify app from already-built dependencies: plugins, hooks, error envelope and routes.
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { TSchema } from '@sinclair/typebox';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { newRequestId } from '../domain/ids.js';
import { AppError } from '../errors/app-error.js';
import { registerRoutes } from '../routes/index.js';
import { registerHealthRoutes } from '../routes/system/health.js';
import { answered } from './answered.js';
import { authHook } from './auth-hook.js';
import type { App } from './types.js';
import type { Deps } from '../wiring/deps.js';
import { lazyDocs } from './docs-app.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { appLogger } from './logging.js';
import { registerJsonBodyParser } from './json-body.js';
import { metered } from './metered-route.js';
import { capConnections } from './connection-cap.js';
import { watchConnectionCap } from './metrics.js';
import { clientErrorHandler, frameworkErrors, MAX_PARAM_LENGTH, shapeNodeAnswers } from './raw-errors.js';
import { missingHost } from './host-required.js';
import { errorResponses, NoQuery } from './schemas.js';
import { openapiOptions } from './openapi/document.js';
import { routeErrors } from './openapi/route-errors.js';
import { responseChecker, responseValidationHook } from './response-validation.js';
import { lazySerializers } from './serializers.js';
import { validatorCompiler } from './validators.js';
import { sweepIdleConnections } from './idle-connections.js';

export interface AppOptions {
  /** Tests: check every response against its route's schema (a mismatch becomes a 500). */
  validateResponses?: boolean;
  /** Tests: compile every request validator and response serializer when the app is ready (they are otherwise compiled on first use). */
  compileSchemasAtReady?: boolean;
  /** Only /healthz, /readyz, /metrics and /openapi.json: what a worker or scheduler serves on METRICS_PORT. */
  systemOnly?: boolean;
  /** `false`: no logs (tests); otherwise our logger, with this level and destination if given. */
  logger?: false | { level?: string; stream?: DestinationStream };
}

function trustHops(hops: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < hops;
}

export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<App> {
  const serializers = lazySerializers();
  const validators = validatorCompiler();
  const app = Fastify({
    // Our logger is set as app.log below; why Fastify has none of its own: see logging.ts.
    logger: false,
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    // A hop count as the function Fastify builds from one (its types take no number).
    trustProxy: typeof deps.config.trustProxy === 'number' ? trustHops(deps.config.trustProxy) : deps.config.trustProxy,
    // Room for the longest parameter a schema allows (a Bluesky handle: 253 characters); the
    // router's default of 100 refused longer ones before their schema could.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // SERVER_CONNECTION_TIMEOUT_MS by a sweep, not Node's timer per socket (idle-connections.ts).
    connectionTimeout: 0,
    // Never longer than the connection timeout, which closes an idle kept-alive connection too: the
    // Keep-Alive header a client trusts must not promise a connection the sweep will close (serve.ts warns).
    keepAliveTimeout: Math.min(deps.config.server.keepAliveTimeoutMs, deps.config.server.connectionTimeoutMs),
    requestTimeout: deps.config.server.requestTimeoutMs,
    // Node checks the headers and request timeouts only this often (30 s by default): a connection
    // that sent part of its headers (slowloris) lived 30 s whatever SERVER_HEADERS_TIMEOUT_MS said.
    // A fifth of the timeout: closed within 1.2 times it, for one pass over the open connections.
    // requireHostHeader: Node's refusal of HTTP/1.1 without Host is an empty 400; each route's first
    // hook and the not-found handler refuse it in the envelope instead (missingHost, below).
    http: { connectionsCheckingInterval: Math.max(200, Math.round(deps.config.server.headersTimeoutMs / 5)), requireHostHeader: false },
    maxRequestsPerSocket: deps.config.server.maxRequestsPerSocket,
    // While closing, a request that arrives on a connection already open (a proxy's kept-alive one)
    // is served as usual, with Connection: close, rather than refused with Fastify's own 503 body:
    // the process still has everything it needs until the last response is out (serve.ts).
    return503OnClosing: false,
    frameworkErrors,
    clientErrorHandler,
    schemaController: { compilersFactory: { buildSerializer: serializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.headersTimeout = deps.config.server.headersTimeoutMs;
  shapeNodeAnswers(app.server);
  const idle = sweepIdleConnections(app.server, deps.config.server.connectionTimeoutMs);
  app.server.once('close', () => idle.stop());
  // SERVER_MAX_CONNECTIONS and SERVER_MAX_CONNECTIONS_PER_ADDRESS: past either, an answer in the
  // envelope, then the connection closes (Node's own maxConnections would drop it unanswered).
  const cap = capConnections(app.server, { total: deps.config.server.maxConnections, perAddress: deps.config.server.maxConnectionsPerAddress });
  watchConnectionCap(deps.metrics.registry, cap);
  app.log = opts.logger === false ? appLogger('silent') : appLogger(opts.logger?.level ?? deps.config.logLevel, opts.logger?.stream);

  // The request's own fields (types.ts) are set by each route's first hook, below, all five in one
  // order, so every routed request has the same shape. Not Fastify's decorateRequest: its request
  // constructor copies decorations by a loop of keyed stores, which V8 cannot specialise (one store
  // site, five keys), about 1% of a keyed call's instructions (docs/benchmarks.md, 2026-12-07).

  // Only JSON bodies: text/plain and friends get 415 in the error envelope.
  app.removeContentTypeParser(['text/plain']);
  registerJsonBodyParser(app);
  app.setValidatorCompiler(validators);
  if (opts.compileSchemasAtReady) {
    app.addHook('onReady', async () => {
      validators.compileAll();
      serializers.compileAll();
    });
  }
  app.setErrorHandler(errorHandler(deps));
  app.setNotFoundHandler(notFoundHandler(deps));

  // Every route: its cost from configuration by operationId, the error envelope in its responses,
  // and, unless public, the key check before it and the metering around its handler. Hooks are
  // added per route (not globally) so that each knows its own cost without looking it up per request.
  const keyCheck = authHook(deps, deps.keys);
  const requestIdOnly = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    reply.header('x-request-id', request.id);
    done();
  };
  // Keyed routes are counted where they answer (see answered.ts); public ones when they finish.
  // A 503 from /readyz is its answer, not a failure: a load balancer polls it every few seconds, and
  // what makes it 503 is logged once where it is known (the storage outage report, the loss of
  // Redis, the source's circuit), not as a 'request failed' line per poll.
  const publicAnswered = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    answered(deps, request, reply, request.routeOptions.url === '/readyz');
    done();
  };
  // Fastify answers HEAD for every GET route. On a keyed route a HEAD would do the call's work and
  // charge it for headers alone, and it is no documented operation: it answers as any other method
  // the API does not have (404, nothing charged). Public pages (health, documents, download links) keep it.
  // (The error handler puts X-Request-Id on every error it answers: keyed-headers.ts.)
  const headNotOffered = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
    done(new AppError('not_found', `No route HEAD ${request.url.split('?')[0]}.`));
  };
  const checkResponses = opts.validateResponses ? responseChecker() : undefined;
  app.addHook('onRoute', (route) => {
    const op = (route.schema as { operationId?: string } | undefined)?.operationId;
    // OPTIONS: the CORS preflight route (answered by its hook, below, with no key and no charge).
    const isPublic = route.url.startsWith('/docs') || route.config?.public === true || route.method === 'OPTIONS';
    const cost = op ? (deps.config.costs[op] ?? 0) : 0;
    route.config = { ...(route.config ?? {}), cost, ...(isPublic ? { public: true } : {}) };
    if (route.schema && op) {
      // An operation without query parameters refuses any, as those with them refuse unknown ones
      // (X API v2 does the same): `?expansions=…` on a tweet is a 400 naming it, not ignored.
      route.schema.querystring ??= NoQuery;
      const response = (route.schema.response ?? {}) as Record<string, unknown>;
      const method = Array.isArray(route.method) ? String(route.method[0]) : String(route.method);
      route.schema.response = { ...response, ...errorResponses(routeErrors({ method, cost, own: route.config?.errors })) };
      (route.schema as Record<string, unknown>)['x-credit-cost'] = cost;
    }
    // A public route with response schemas (health) answers the 400 of a request without Host too (missingHost).
    const publicResponses = isPublic ? (route.schema?.response as Record<string, unknown> | undefined) : undefined;
    if (publicResponses && !('400' in publicResponses)) route.schema!.response = { ...publicResponses, ...errorResponses(['invalid_request']) };
    const own = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : [];
    const first = isPublic ? requestIdOnly : route.method === 'HEAD' ? headNotOffered : keyCheck;
    const url = route.url;
    const hook = (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => {
      request.startedAt = performance.now();
      request.routeUrl = url;
      request.auth = undefined;
      request.metering = undefined;
      request.rateLimit = undefined;
      const noHost = missingHost(request);
      if (noHost) return done(noHost);
      // No identifier, cursor or date holds a NUL, and Postgres refuses one in text: a clear 400.
      if (request.url.includes('%00')) {
        return done(new AppError('invalid_request', 'The URL holds a NUL character (%00).', { fields: [{ field: 'url', message: 'holds a NUL character' }] }));
      }
      first(request, reply, done);
    };
    route.onRequest = [hook, ...own] as typeof route.onRequest;
    if (isPublic) {
      const ownDone = route.onResponse ? (Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]) : [];
      route.onResponse = [publicAnswered, ...ownDone] as typeof route.onResponse;
    }
    if (!isPublic) {
      const responses = route.schema?.response as Record<string, TSchema> | undefined;
      route.handler = metered(deps, route.handler, {
        cost,
        endpoint: op ?? route.url,
        route: route.url,
        keptAnswer: route.config?.keptAnswer,
        validate: checkResponses && responses ? (code, payload) => checkResponses(route.url, responses, code, payload) : undefined,
      });
    }
  });

  // Browsers on the origins the operator lists may call the API (off unless CORS_ORIGINS is set: a
  // key in a web page is readable by whoever loads it). A preflight is answered by the plugin's
  // hook before any route's, without a key, and charged nothing; every answer, errors included,
  // carries the origin and exposes the headers a caller reads.
  if (deps.config.corsOrigins && !opts.systemOnly) {
    const { default: cors } = await import('@fastify/cors');
    await app.register(cors, {
      origin: deps.config.corsOrigins,
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['x-api-key', 'content-type', 'idempotency-key'],
      exposedHeaders: ['x-request-id', 'x-credits-charged', 'x-credits-remaining', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'idempotent-replayed'],
      maxAge: 600,
      strictPreflight: false,
    });
  }
  await app.register(swagger, openapiOptions(deps.config));
  // Swagger UI, in an instance of its own built on the first request for it (docs-app.ts).
  if (!opts.systemOnly) {
    const docs = lazyDocs(() => app.swagger() as ReturnType<Parameters<typeof lazyDocs>[0]>);
    for (const url of ['/docs', '/docs/*']) app.get(url, { schema: { hide: true }, logLevel: 'warn' }, docs.handler);
    app.addHook('onClose', () => docs.close());
  }

  // Public routes' payloads and every error envelope are checked here; keyed routes in `metered`.
  if (opts.validateResponses) app.addHook('preSerialization', responseValidationHook());
  if (opts.systemOnly) registerHealthRoutes(app, deps);
  else registerRoutes(app, deps);
  return app;
}
