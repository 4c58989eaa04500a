import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ErrorCode } from '../errors/app-error.js';
import type { Reservation } from '../credits/meter-store.js';
import type { RateDecision } from '../ratelimit/rate-limiter.js';
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface AuthContext {
  keyId: string;
  accountId: string;
  planId: string;
  balance: number;
  rateLimitPerMinute: number;
}

export interface MeteringState {
  reservationId?: Reservation;
  charged: number;
  balanceAfter?: number;
  idempotencyKey?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    metering?: MeteringState;
    /** The rate limit's decision for a keyed call, once made: its headers go on every answer to it (keyed-headers.ts). */
    rateLimit?: RateDecision;
    /** The matched route's pattern (undefined for unknown routes), for metrics and logs. */
    routeUrl?: string;
    /** performance.now() when a route's first hook ran (undefined for unknown routes): for the duration metric. */
    startedAt?: number;
  }
  interface FastifyContextConfig {
    /** Routes without an API key: health, docs, metrics, download links. */
    public?: boolean;
    /** Credits per successful call; filled from configuration by operationId when the route is added. */
    cost?: number;
    /** What of a 2xx answer an Idempotency-Key keeps for replay, when not all of it (no secrets kept). */
    keptAnswer?: (body: string) => string;
    /**
     * Error codes this route answers besides those of every keyed route (see routeErrors in
     * openapi/route-errors.ts): they become its error response schemas, documented and, in tests, enforced.
     */
    errors?: readonly ErrorCode[];
  }
}
