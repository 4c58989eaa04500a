// Builds the Fastify app from already-built dependencies: plugins, hooks, error envelope and routes.
import Fastify, { type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { newRequestId } from '../domain/ids.js';
import { registerRoutes } from '../routes/index.js';
import { authHook } from './auth.js';
import type { App, Deps } from './context.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { idempotencyCleanupHook, idempotencyHook, idempotencySaveHook } from './idempotency.js';
import { releaseLeftoverHook, reserveHook, settleHook } from './metering.js';
import { ErrorEnvelope } from './schemas.js';
import { responseValidationHook } from './response-validation.js';
import { validatorCompiler } from './validators.js';

export interface AppOptions {
  /** Tests: check every response against its route's schema (a mismatch becomes a 500). */
  validateResponses?: boolean;
  logger?: FastifyServerOptions['logger'];
}

export async function buildApp(deps: Deps, opts: AppOptions = {}): Promise<App> {
  const app = Fastify({
    logger: opts.logger ?? {
      level: deps.config.logLevel,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'], censor: '[redacted]' },
      serializers: {
        // Query strings may hold signatures of download links: log the path only.
        req: (req: { method: string; url: string; id: string }) => ({ method: req.method, path: req.url.split('?')[0], requestId: req.id }),
      },
    },
    disableRequestLogging: true,
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    trustProxy: deps.config.trustProxy,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Only JSON bodies: text/plain and friends get 415 in the error envelope.
  app.removeContentTypeParser(['text/plain']);
  app.setValidatorCompiler(validatorCompiler());
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  // Every route: its cost from configuration by operationId, and the error envelope in its responses.
  app.addHook('onRoute', (route) => {
    const op = (route.schema as { operationId?: string } | undefined)?.operationId;
    const isDocs = route.url.startsWith('/docs');
    route.config = { ...(route.config ?? {}), cost: op ? (deps.config.costs[op] ?? 0) : 0, ...(isDocs ? { public: true } : {}) };
    if (route.schema && op) {
      const response = (route.schema.response ?? {}) as Record<string, unknown>;
      route.schema.response = { ...response, '4xx': ErrorEnvelope, '5xx': ErrorEnvelope };
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Social Data Gateway API',
        version: '1.0.0',
        description: 'Credit-metered social-post data, bulk exports and account management. Every call carries X-API-Key.',
      },
      components: { securitySchemes: { ApiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } } },
      security: [{ ApiKey: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, logLevel: 'warn' });

  // One hook per stage (each extra hook costs a promise per request); the stages, in order:
  // request id → key → rate limit | idempotency → credit hold | settle or release → idempotency record.
  const auth = authHook(deps);
  const idempotency = idempotencyHook(deps);
  const reserve = reserveHook(deps);
  const settle = settleHook(deps);
  const saveIdempotent = idempotencySaveHook(deps);
  const releaseLeftover = releaseLeftoverHook(deps);
  const cleanupIdempotent = idempotencyCleanupHook(deps);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    await auth(request, reply);
  });
  app.addHook('preHandler', async (request, reply) => {
    if (!request.auth) return;
    if (request.method === 'POST') {
      // A replay has been sent: nothing more to do (and nothing to hold).
      if ((await idempotency(request, reply)) !== undefined) return reply;
    }
    await reserve(request);
  });
  if (opts.validateResponses) app.addHook('preSerialization', responseValidationHook());
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.auth) return payload;
    const p = await settle(request, reply, payload);
    return request.metering?.idempotencyKey ? saveIdempotent(request, reply, p) : p;
  });
  app.addHook('onResponse', async (request, reply) => {
    if (request.metering?.reservationId) await releaseLeftover(request);
    if (request.metering?.idempotencyKey) await cleanupIdempotent(request);
    const route = request.routeOptions.url ?? 'unknown';
    deps.metrics.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    deps.metrics.duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
    if (reply.statusCode >= 500) request.log.warn({ status: reply.statusCode, route }, 'request failed');
    else request.log.debug({ status: reply.statusCode, route, ms: reply.elapsedTime }, 'request completed');
  });

  registerRoutes(app, deps);
  return app;
}
