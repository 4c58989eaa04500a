import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors/app-error.js';
import type { Deps } from './context.js';

// Reserve before the work, settle on a 2xx, release on anything else: a failure is never charged.

/** preHandler (after validation, so bad input is refused before any credit is held). */
export function reserveHook(deps: Deps) {
  return async (request: FastifyRequest): Promise<void> => {
    const auth = request.auth;
    if (!auth) return;
    request.metering ??= { charged: 0 };
    const cost = request.routeOptions.config.cost ?? 0;
    if (cost === 0) return;
    const r = await deps.meter.reserve(auth.accountId, cost);
    if (!r.ok) {
      request.metering.balanceAfter = r.available;
      throw new AppError('insufficient_credits', `This call costs ${cost} credits and your available balance is ${r.available}.`, {
        required: cost,
        balance: r.available,
      });
    }
    request.metering.reservationId = r.reservationId;
  };
}

/** onSend: settles or releases, and reports the outcome in X-Credits-* headers. */
export function settleHook(deps: Deps) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> => {
    const auth = request.auth;
    if (!auth) return payload;
    const m = (request.metering ??= { charged: 0 });
    if (m.reservationId) {
      const id = m.reservationId;
      m.reservationId = undefined;
      if (reply.statusCode >= 200 && reply.statusCode < 300) {
        const s = await deps.meter.settle(id, { requestId: request.id, keyId: auth.keyId, endpoint: request.routeOptions.schema?.operationId ?? request.routeOptions.url ?? '' });
        if (s) {
          m.charged = s.charged;
          m.balanceAfter = s.balance;
          deps.metrics.creditsCharged.inc({ route: request.routeOptions.url ?? '' }, s.charged);
        }
      } else {
        await deps.meter.release(id);
        m.balanceAfter = await deps.meter.balance(auth.accountId);
      }
    }
    reply.header('x-credits-charged', m.charged);
    reply.header('x-credits-remaining', m.balanceAfter ?? auth.balance);
    return payload;
  };
}

/** A request that ends without onSend (client gone mid-handler) must not keep its hold. */
export function releaseLeftoverHook(deps: Deps) {
  return async (request: FastifyRequest): Promise<void> => {
    const id = request.metering?.reservationId;
    if (id) {
      request.metering!.reservationId = undefined;
      await deps.meter.release(id);
    }
  };
}
