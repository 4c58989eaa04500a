import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthRecord } from '../credits/meter-store.js';
import { AppError } from '../errors/app-error.js';
import type { Deps } from '../wiring/deps.js';
import type { MultiDecision } from '../ratelimit/rate-limiter.js';
import type { KeyResolver } from '../accounts/key-resolver.js';
import { IpGuard } from '../ratelimit/ip-guard.js';
import { planOf } from '../config/plans.js';

/** onRequest of every keyed route (callback style: no promise when the key is known at once, see KeyResolver.known). */
export function authHook(deps: Pick<Deps, 'config' | 'rateLimiter' | 'store'>, keys: KeyResolver) {
  // The embedded store's file removed or replaced: every keyed call is a 503 (store-file-watch.ts).
  const fileGone = deps.store.fileGone;
  const plans = new Map(deps.config.plans.map((p) => [p.id, p.rateLimitPerMinute]));
  // An account on a plan the deployment no longer has: the default plan's (plans.ts, planOf).
  const fallback = planOf(deps.config, undefined).rateLimitPerMinute;
  const ipGuard = new IpGuard(deps.rateLimiter, deps.config.authFailuresPerMinute);
  // A failed authentication counts against the caller's address (see ip-guard.ts).
  const refuse = (request: FastifyRequest, err: AppError, done: (err?: Error) => void): void => {
    ipGuard.failed(request.ip, err).then(done, done);
  };

  const limit = (request: FastifyRequest, rec: AuthRecord | undefined): void | Promise<void> => {
    if (!rec || rec.revoked) throw new AppError('invalid_api_key', 'The API key is not valid: it is unknown, malformed or revoked.');
    const perMinute = rec.rateLimitPerMinute ?? plans.get(rec.planId) ?? fallback;
    request.auth = { keyId: rec.keyId, accountId: rec.accountId, planId: rec.planId, balance: rec.balance, rateLimitPerMinute: perMinute };
    // One bucket, the account's: every key of the account draws from it, so new keys add no calls
    // to its minute, and a key's own limit (the same figure) is kept by it too. A bucket per key
    // beside it never refused a call the account's allowed (the account's never holds more tokens),
    // and cost Redis half its work a call (docs/benchmarks.md, 2026-11-28).
    const d = deps.rateLimiter.takeAll([{ key: rec.accountId, perMinute }]);
    const scope = rec.activeKeys > 1 ? 'account' : 'key';
    if (d instanceof Promise) return d.then((x) => applyLimit(request, perMinute, scope, x));
    applyLimit(request, perMinute, scope, d);
  };

  return (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void => {
    const gone = fileGone?.();
    if (gone) return done(gone);
    try {
      const raw = request.headers['x-api-key'];
      const key = Array.isArray(raw) ? raw[0] : raw;
      // request.ip goes through Fastify's getter and the socket's peer name: only when some address
      // is blocked. A blocked address's requests are refused before any lookup, except those with a
      // key this process found valid lately (a neighbour behind the same NAT as a key guesser).
      if (ipGuard.blocking && !(key && keys.vouched(key))) ipGuard.check(request.ip);
      if (!key) return refuse(request, new AppError('missing_api_key', 'Send your API key in the X-API-Key header.'), done);
      // The key's record without waiting when it is known (SQLite: read this turn; Postgres: cached).
      const known = keys.known(key);
      const next = known ? limit(request, known.record) : keys.resolve(key).then((rec) => limit(request, rec));
      if (next instanceof Promise) {
        next.then(
          () => done(),
          (err: Error) => (err instanceof AppError && err.status === 401 ? refuse(request, err, done) : done(err)),
        );
      } else done();
    } catch (err) {
      if (err instanceof AppError && err.status === 401) return refuse(request, err, done);
      done(err as Error);
    }
  };
}

/**
 * `scope`: what a refusal names. The account's only key reached the limit: `key`; one of several
 * keys, which share it: `account`. The decision is kept on the request, and its headers written with
 * the answer, whichever path makes it (keyed-headers.ts).
 */
function applyLimit(request: FastifyRequest, perMinute: number, scope: 'key' | 'account', d: MultiDecision): void {
  request.rateLimit = d;
  if (!d.allowed) {
    const whose = scope === 'key' ? 'this API key' : "this account (all of its keys together)";
    throw new AppError('rate_limited', `Rate limit of ${perMinute} requests a minute for ${whose} reached; retry in ${d.retryAfterSeconds} s.`, { scope, retryAfterSeconds: d.retryAfterSeconds }, {
      'retry-after': String(d.retryAfterSeconds),
    });
  }
}
