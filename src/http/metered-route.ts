import type { FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { answered } from './answered.js';
import { AnswerBurst } from './answer-burst.js';
import { JsonText } from './json-text.js';
import { keyedHeaders, sendKeyedAnswer, writeKeyedAnswer } from './keyed-headers.js';
import type { Deps } from '../wiring/deps.js';
import { claimIdempotencyKey, forgetIdempotencyKey, saveIdempotentResponse } from '../credits/idempotency.js';
import { reserveAfterHolds } from '../credits/hold-wait.js';
import { insufficientCredits, type Charged, type SettleTarget } from '../credits/meter-store.js';

// Reserve before the work, settle on a 2xx, release on anything else: a failure is never charged.
// One wrapper around each keyed route's handler does all of it, after validation (bad input is
// refused before any credit is held) and before anything is sent: the response is serialized first,
// so a response that cannot be produced is never charged either.

export interface MeteredRoute {
  cost: number;
  /** The ledger's endpoint: the route's operationId. */
  endpoint: string;
  route: string;
  /** Tests: checks the payload against the route's response schema before it is serialized. */
  validate?: ((statusCode: number, payload: unknown) => void) | undefined;
  /** See FastifyContextConfig.keptAnswer. */
  keptAnswer?: ((body: string) => string) | undefined;
}

type Handler = (this: unknown, request: FastifyRequest, reply: FastifyReply) => unknown;

/** An answer's body: JSON text, or its UTF-8 bytes, with its length when known (JsonText). */
type Body = JsonText;

/** One queue for every free route of the process: a turn's answers go out together, whatever their routes. */
const burst = new AnswerBurst();

export function metered(deps: Pick<Deps, 'config' | 'meter' | 'metrics' | 'store'>, handler: RouteHandlerMethod, route: MeteredRoute): RouteHandlerMethod {
  const inner = handler as unknown as Handler;
  const { cost } = route;

  // The payload as the body to send: stored JSON as is, anything else through the route's serializer.
  const toBody = (reply: FastifyReply, payload: unknown): Body => {
    if (payload instanceof JsonText) {
      route.validate?.(reply.statusCode, JSON.parse(payload.text));
      return payload;
    }
    route.validate?.(reply.statusCode, payload);
    return new JsonText(reply.serialize(payload) as string);
  };

  // Written straight to Node unless a plugin puts headers of its own on replies (CORS: keyed-headers.ts).
  const direct = !deps.config.corsOrigins;
  // Tests (route.validate set): a handler's own header, which the direct answer would drop, is an error.
  const strict = route.validate !== undefined;
  const send = (request: FastifyRequest, reply: FastifyReply, body: Body): void => {
    answered(deps, request, reply);
    if (direct) writeKeyedAnswer(request, reply, body, strict);
    else sendKeyedAnswer(request, reply, body);
  };

  // Handlers below answer with reply.send() and return undefined: an async handler that returned the
  // reply itself would make Fastify wait on it as a thenable, one more job per request.
  // The whole path: Idempotency-Key claim, hold, handler, kept answer, settle.
  const full = async function meteredHandler(this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const auth = request.auth!;
    const m = (request.metering = { charged: 0 } as NonNullable<FastifyRequest['metering']>);
    let body: Body;
    try {
      if (request.method === 'POST' && request.headers['idempotency-key'] !== undefined) {
        const claim = await claimIdempotencyKey(deps.store, deps.config.idempotencyTtlHours, {
          accountId: auth.accountId,
          key: request.headers['idempotency-key'],
          route: route.route,
          body: request.body,
        });
        if ('claimed' in claim) m.idempotencyKey = claim.claimed;
        else {
          const replay = claim.replay;
          reply.code(replay.statusCode).header('idempotent-replayed', 'true');
          keyedHeaders(request, reply);
          answered(deps, request, reply);
          reply.type('application/json; charset=utf-8').send(withRequestId(replay.body, request.id));
          return undefined;
        }
      }
      if (cost > 0) {
        // Decided in the process when it can be (no promise to wait for), else by the store.
        const first = deps.meter.tryReserveSync?.(auth.accountId, cost) ?? (await deps.meter.reserve(auth.accountId, cost));
        // Refused: at once if the balance is below the cost, else once the account's other calls
        // in progress have ended (or CREDIT_HOLD_WAIT_MS has passed) without freeing enough.
        const r = first.ok ? first : await reserveAfterHolds(deps.meter, auth.accountId, cost, first, deps.config.credits.holdWaitMs);
        if (!r.ok) {
          // The balance itself, as every other answer's X-Credits-Remaining: the available credits
          // are less while other calls of the account hold some (the details give both).
          m.balanceAfter = r.balance;
          throw insufficientCredits(cost, r.balance, r.available);
        }
        m.reservationId = r.reservationId;
      }
      let payload = inner.call(this, request, reply);
      if (payload instanceof Promise) payload = await payload;
      body = toBody(reply, payload);
    } catch (err) {
      await undo(deps, request);
      throw err;
    }
    return settleAndSend(request, reply, body);
  };

  // The hold is settled: what it charged (nothing if it was gone), for the headers and the metric.
  const charged = (request: FastifyRequest, s: Charged | undefined): void => {
    const m = request.metering!;
    m.reservationId = undefined;
    if (!s) return;
    m.charged = s.charged;
    m.balanceAfter = s.balance;
    deps.metrics.creditsCharged.inc(route.route, s.charged);
  };

  // After the handler: refund a non-2xx, keep an idempotent answer, charge, answer.
  const settleAndSend = async (request: FastifyRequest, reply: FastifyReply, body: Body): Promise<void> => {
    const auth = request.auth!;
    const m = request.metering!;
    try {
      // Charged only for a 2xx: a handler that answers otherwise without throwing is a failure too.
      if (reply.statusCode < 200 || reply.statusCode >= 300) await undo(deps, request);
      // The answer to an Idempotency-Key is kept before the charge: if keeping it fails, nothing has
      // been charged; if the charge then fails, undo drops it with the claim, so a retry runs anew.
      // (A process that dies between the two leaves a kept answer that was never charged: a replay
      // of it is free, which errs on the caller's side.)
      if (m.idempotencyKey) {
        const text = body.text;
        await saveIdempotentResponse(deps.store, auth.accountId, m.idempotencyKey, reply.statusCode, route.keptAnswer && reply.statusCode < 300 ? route.keptAnswer(text) : text);
      }
      if (m.reservationId && request.method === 'GET' && (request.raw.destroyed || reply.raw.destroyed)) {
        // The caller closed the connection while the read was under way: it cannot be answered 2xx,
        // so it is not charged (a write keeps its charge: its key, batch or export exists). Counted
        // as nginx's 499, client closed request; there is no one to send an answer to. The request's
        // flag too: a pipelined request's response waits for the one before it and has no socket
        // yet, so Node never marks it destroyed. As far as the process has noticed: a close it has
        // not yet read (a busy event loop) is not seen.
        await undo(deps, request);
        reply.code(499);
        answered(deps, request, reply);
        reply.hijack();
        return;
      }
      if (m.reservationId) {
        // The hold stays recorded until settled: if settling fails, undo releases it (a no-op if the
        // failed settle already let it go).
        charged(request, await deps.meter.settle(m.reservationId, { requestId: request.id, keyId: auth.keyId, endpoint: route.endpoint }));
      }
      m.idempotencyKey = undefined;
    } catch (err) {
      await undo(deps, request);
      throw err;
    }
    send(request, reply, body);
  };

  // What the synchronous path does with a charge's outcome (Settling calls it; it never throws).
  const outcome: ChargeOutcome = {
    settled(request, reply, body, s) {
      try {
        charged(request, s);
        send(request, reply, body);
      } catch (err) {
        reply.send(err as Error);
      }
    },
    failed(request, reply, err) {
      undoThrow(deps, request, err).catch((e: unknown) => reply.send(e as Error));
    },
  };
  if (cost > 0) {
    // The common charged call (no Idempotency-Key, the hold and the answer known at once) takes the
    // same steps without a promise of its own: the charge's outcome goes to one object that answers.
    // Anything else, or anything that fails, takes the full path above. (The cached tweet under 50
    // connections: 3 to 6% less CPU a request than through the async wrapper, alternating runs.)
    return function chargedHandler(this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
      if (request.method === 'POST' && request.headers['idempotency-key'] !== undefined) return full.call(this, request, reply);
      const r = deps.meter.tryReserveSync?.(request.auth!.accountId, cost);
      if (!r?.ok) return full.call(this, request, reply);
      const m = (request.metering = { charged: 0, reservationId: r.reservationId } as NonNullable<FastifyRequest['metering']>);
      let body: Body;
      try {
        const payload = inner.call(this, request, reply);
        if (payload instanceof Promise) return payload.then((p) => toBody(reply, p)).then((b) => settleAndSend(request, reply, b), (err) => undoThrow(deps, request, err));
        body = toBody(reply, payload);
      } catch (err) {
        return undoThrow(deps, request, err);
      }
      if (reply.statusCode < 200 || reply.statusCode >= 300) return settleAndSend(request, reply, body);
      deps.meter.settleTo(m.reservationId!, { requestId: request.id, keyId: request.auth!.keyId, endpoint: route.endpoint }, new Settling(outcome, request, reply, body));
      return undefined;
    } as RouteHandlerMethod;
  }

  // A free route holds and settles nothing, so unless an Idempotency-Key must be claimed, the wrapper
  // is synchronous, and a synchronous handler answers with no promise at all, at the end of the turn
  // with the turn's other answers (answer-burst.ts).
  return function freeHandler(this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
    if (request.method === 'POST' && request.headers['idempotency-key'] !== undefined) return full.call(this, request, reply);
    request.metering = { charged: 0 };
    const payload = inner.call(this, request, reply);
    if (payload instanceof Promise) return payload.then((p) => send(request, reply, toBody(reply, p)));
    const body = toBody(reply, payload);
    burst.later(
      () => send(request, reply, body),
      (err) => reply.send(err),
    );
    return undefined;
  } as RouteHandlerMethod;
}

interface ChargeOutcome {
  settled(request: FastifyRequest, reply: FastifyReply, body: Body, s: Charged | undefined): void;
  failed(request: FastifyRequest, reply: FastifyReply, err: unknown): void;
}

/** One charged call waiting for its charge's commit (one class for every route: the stores' call sites stay monomorphic). */
class Settling implements SettleTarget {
  constructor(
    private readonly outcome: ChargeOutcome,
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly body: Body,
  ) {}

  settled(s: Charged | undefined): void {
    this.outcome.settled(this.request, this.reply, this.body, s);
  }

  failed(err: unknown): void {
    this.outcome.failed(this.request, this.reply, err);
  }
}

/** undo, then the failure (a rejected promise, for Fastify's error path). */
async function undoThrow(deps: Pick<Deps, 'config' | 'meter' | 'metrics' | 'store'>, request: FastifyRequest, err: unknown): Promise<never> {
  await undo(deps, request);
  throw err;
}

/** A failed call: its hold is released and its idempotency claim freed, so a corrected retry can run. */
async function undo(deps: Pick<Deps, 'config' | 'meter' | 'metrics' | 'store'>, request: FastifyRequest): Promise<void> {
  const m = request.metering!;
  m.charged = 0;
  if (m.reservationId) {
    const id = m.reservationId;
    m.reservationId = undefined;
    await deps.meter.release(id);
    // For the answer's X-Credits-Remaining only: with the store out of reach (the failure being
    // answered may be that, or a charge whose outcome it lost), the failure is answered as it is.
    m.balanceAfter = await deps.meter.balance(request.auth!.accountId).catch(() => undefined);
  }
  if (m.idempotencyKey) {
    const key = m.idempotencyKey;
    m.idempotencyKey = undefined;
    await forgetIdempotencyKey(deps.store, request.auth!.accountId, key);
  }
}

/**
 * A kept answer replayed as this request's: its request id (meta.requestId, or a list's top-level
 * requestId) becomes this request's, as X-Request-Id is, so that a header and its body never name two
 * requests. The rest is the first answer's, byte for byte in meaning.
 */
function withRequestId(body: string, requestId: string): string {
  const answer = JSON.parse(body) as { meta?: { requestId?: unknown }; requestId?: unknown };
  if (answer.meta && typeof answer.meta === 'object' && 'requestId' in answer.meta) answer.meta.requestId = requestId;
  else if ('requestId' in answer) answer.requestId = requestId;
  else return body;
  return JSON.stringify(answer);
}
