// /docs (Swagger UI) is served by a Fastify instance of its own, built on the first request for it.
// @fastify/swagger-ui and what it loads (@fastify/static, send, glob, its own yaml) were about an
// eighth of the server's start-up (2026-11-26), for pages most processes never serve. The gateway
// forwards each /docs request to that instance in process (inject) and answers what it answered.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { StaticDocumentSpec } from '@fastify/swagger';
import { docsCsp, docsHeaders } from './docs-headers.js';

/** Request headers a static file server acts on; the rest (the caller's key, cookies) stay behind. */
const FORWARDED = ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since', 'range', 'host'] as const;
/** Answer headers the gateway's own connection sets. */
const OWN = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date']);

export interface LazyDocs {
  /** The handler of GET /docs and /docs/*. */
  handler(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  /** Closes the docs' instance if it was built (with the gateway's). */
  close(): Promise<void>;
}

/** `spec`: the gateway's OpenAPI document, read when the docs are first built. */
export function lazyDocs(spec: () => StaticDocumentSpec['document']): LazyDocs {
  let docs: Promise<FastifyInstance> | undefined;
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    docs ??= buildDocs(spec()).catch((err: unknown) => {
      docs = undefined; // the next request tries again
      throw err;
    });
    const app = await docs;
    const headers: Record<string, string> = {};
    for (const h of FORWARDED) {
      const v = request.headers[h];
      if (typeof v === 'string') headers[h] = v;
    }
    const res = await app.inject({ method: request.method as 'GET' | 'HEAD', url: request.url, headers });
    // Its failures are the gateway's: the not-found handler, or the error handler by status, each in
    // the contract's envelope (the instance's own answers are Fastify's default shape).
    if (res.statusCode === 404) {
      reply.callNotFound();
      return reply;
    }
    if (res.statusCode >= 400) throw Object.assign(new Error(`The documentation answered ${res.statusCode}.`), { statusCode: res.statusCode });
    for (const [k, v] of Object.entries(res.headers)) if (!OWN.has(k) && v !== undefined) reply.header(k, v);
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  const close = async (): Promise<void> => {
    const built = await docs?.catch(() => undefined);
    await built?.close();
  };
  return { handler, close };
}

async function buildDocs(document: StaticDocumentSpec['document']): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')]);
  const app = Fastify({ logger: false });
  await app.register(swagger, { mode: 'static', specification: { document } });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    staticCSP: true,
    transformStaticCSP: docsCsp,
    uiHooks: { onRequest: docsHeaders },
  });
  await app.ready();
  return app;
}
