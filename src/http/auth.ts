import type { FastifyRequest } from 'fastify';
import { hashApiKey, isWellFormedKey } from '../accounts/api-keys.js';
import { AppError } from '../errors/app-error.js';
import type { Deps } from './context.js';

/** onRequest: resolves X-API-Key to its account, then applies the key's rate limit. */
export function authHook(deps: Deps) {
  const plans = new Map(deps.config.plans.map((p) => [p.id, p]));
  return async (request: FastifyRequest, reply: import('fastify').FastifyReply): Promise<void> => {
    if (request.routeOptions.config.public || request.is404) return;
    const raw = request.headers['x-api-key'];
    const key = Array.isArray(raw) ? raw[0] : raw;
    if (!key) throw new AppError('missing_api_key', 'Send your API key in the X-API-Key header.');
    const rec = isWellFormedKey(key) ? await deps.meter.findKey(hashApiKey(key)) : undefined;
    if (!rec || rec.revoked) throw new AppError('invalid_api_key', 'The API key is not valid: it is unknown, malformed or revoked.');
    const perMinute = rec.rateLimitPerMinute ?? plans.get(rec.planId)?.rateLimitPerMinute ?? 600;
    request.auth = { keyId: rec.keyId, accountId: rec.accountId, planId: rec.planId, balance: rec.balance, rateLimitPerMinute: perMinute };

    const d = await deps.rateLimiter.take(rec.keyId, perMinute);
    reply.header('ratelimit-limit', d.limit);
    reply.header('ratelimit-remaining', d.remaining);
    reply.header('ratelimit-reset', d.resetSeconds);
    if (!d.allowed) {
      throw new AppError('rate_limited', `Rate limit of ${perMinute} requests a minute reached; retry in ${d.retryAfterSeconds} s.`, { retryAfterSeconds: d.retryAfterSeconds }, {
        'retry-after': String(d.retryAfterSeconds),
      });
    }
  };
}
