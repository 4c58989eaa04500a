// The metering wrapper charges only answers that are 2xx, whether the handler throws or not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Writable } from 'node:stream';
import Fastify, { type RouteHandlerMethod } from 'fastify';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { buildApp } from '../../src/http/app.js';
import { appLogger } from '../../src/http/logging.js';
import { metered } from '../../src/http/metered-route.js';
import { errorHandler } from '../../src/http/error-handler.js';
import { insufficientCredits, type MeterStore } from '../../src/credits/meter-store.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { answerLost } from '../../src/credits/lost-answers.js';
import type { LostCharge } from '../../src/credits/refunds.js';

let h: Harness;

/** A log stream that keeps each line written to it. */
function logLines(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk));
      cb();
    },
  });
  return { lines, stream };
}
before(async () => {
  h = await startHarness('sqlite');
});
after(() => h.close());

test('a handler that sets a non-2xx status without throwing is not charged; a 2xx one is', async () => {
  const a = await h.account({ credits: 100 });
  // As buildApp sets up every app: our logger.
  const app = Fastify();
  app.log = appLogger('silent');
  app.addHook('onRequest', async (request) => {
    request.auth = { keyId: 'key_t', accountId: a.accountId, planId: 'free', balance: 100, rateLimitPerMinute: 600 };
  });
  const route = (code: number): RouteHandlerMethod =>
    metered(h.deps, (async (_req, reply) => {
      reply.code(code);
      return { ok: code };
    }) as RouteHandlerMethod, { cost: 30, endpoint: `t${code}`, route: `/t${code}` });
  app.get('/t409', route(409));
  app.get('/t200', route(200));
  try {
    const refused = await app.inject({ url: '/t409' });
    assert.equal(refused.statusCode, 409);
    assert.equal(refused.headers['x-credits-charged'], '0');
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 100);
    // Its hold was released: the whole balance can be held again.
    const ok = await app.inject({ url: '/t200' });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['x-credits-charged'], '30');
    assert.equal(ok.headers['x-credits-remaining'], '70');
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 70);
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 70);
  } finally {
    await app.close();
  }
});

test('an unexpected failure is a 500 in the envelope: not charged, no internals shown, logged with its request id', async () => {
  const a = await h.account({ credits: 1000 });
  const { lines, stream } = logLines();
  const broken = Object.create(h.deps.social) as typeof h.deps.social;
  broken.community = () => Promise.reject(new TypeError('secret internals: cannot read x of undefined'));
  const app = await buildApp({ ...h.deps, social: broken }, { logger: { level: 'error', stream } });
  try {
    const res = await app.inject({ url: '/social/v1/communities/1234', headers: { 'x-api-key': a.apiKey } });
    assert.equal(res.statusCode, 500);
    const body = JSON.parse(res.body) as { error: { code: string; message: string }; meta: { requestId: string } };
    assert.equal(body.error.code, 'internal_error');
    assert.ok(!res.body.includes('secret internals'));
    assert.equal(body.meta.requestId, res.headers['x-request-id']);
    assert.equal(res.headers['x-credits-charged'], '0');
    assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 1000);
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; requestId?: string; err?: { message: string; stack: string } });
    const line = logged.find((l) => l.msg === 'unhandled error');
    assert.equal(line?.requestId, body.meta.requestId);
    assert.match(line?.err?.stack ?? '', /secret internals/);
  } finally {
    await app.close();
  }
});

// The charged path that answers without a promise of its own (no Idempotency-Key, the hold and the
// answer known at once) hands the charge's outcome to an object: each way it can end, over HTTP.
test('the synchronous charged path: a refused or failed charge, or a throwing handler, is answered and not charged; the hold is released', async () => {
  const a = await h.account({ credits: 100 });
  const real = h.deps.meter;
  let failWith: { err: unknown; releases: boolean } | undefined;
  let sawSettle = 0;
  // The real store, except that settleTo can fail: letting the hold go first (as the stores do when
  // the credits are gone), or not (the route must release it).
  const meter: MeterStore = Object.create(real) as MeterStore;
  meter.settleTo = (id, info, to) => {
    sawSettle++;
    const fail = failWith;
    if (!fail) return real.settleTo(id, info, to);
    if (!fail.releases) return void setImmediate(() => to.failed(fail.err));
    void real.release(id).then(() => to.failed(fail.err));
  };
  const deps = { ...h.deps, meter };
  const app = Fastify();
  app.log = appLogger('silent');
  app.setErrorHandler(errorHandler(deps));
  app.addHook('onRequest', async (request) => {
    // A balance read before the call: after a failure the answer says the stored one.
    request.auth = { keyId: 'key_t', accountId: a.accountId, planId: 'free', balance: 999, rateLimitPerMinute: 600 };
  });
  app.get('/ok', metered(deps, (() => ({ ok: true })) as unknown as RouteHandlerMethod, { cost: 30, endpoint: 'tok', route: '/ok' }));
  app.get(
    '/throws',
    metered(
      deps,
      (() => {
        throw new Error('handler broke');
      }) as unknown as RouteHandlerMethod,
      { cost: 30, endpoint: 'tthrows', route: '/throws' },
    ),
  );
  const balance = async () => (await getBalance(h.deps.store.db, a.accountId))!.balance;
  try {
    failWith = { err: insufficientCredits(30, 0), releases: true };
    const refused = await app.inject({ url: '/ok' });
    assert.equal(refused.statusCode, 402);
    assert.equal((JSON.parse(refused.body) as { error: { code: string } }).error.code, 'insufficient_credits');
    assert.equal(refused.headers['x-credits-charged'], '0');
    assert.equal(refused.headers['x-credits-remaining'], '100');

    failWith = { err: new Error('disk I/O error'), releases: false };
    const failed = await app.inject({ url: '/ok' });
    assert.equal(failed.statusCode, 500);
    assert.equal((JSON.parse(failed.body) as { error: { code: string } }).error.code, 'internal_error');
    assert.equal(failed.headers['x-credits-charged'], '0');
    assert.equal(failed.headers['x-credits-remaining'], '100');
    assert.equal(sawSettle, 2, 'both calls took the synchronous path');

    const threw = await app.inject({ url: '/throws' });
    assert.equal(threw.statusCode, 500);
    assert.equal(threw.headers['x-credits-charged'], '0');
    assert.equal(threw.headers['x-credits-remaining'], '100');
    assert.equal(sawSettle, 2, 'a handler that throws settles nothing');

    assert.equal(await balance(), 100);
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 100);
    // Every hold above was released: the whole balance can be held again, and a charge then answers.
    failWith = undefined;
    const held = await real.reserve(a.accountId, 100);
    assert.ok(held.ok);
    await real.release(held.reservationId);
    const ok = await app.inject({ url: '/ok' });
    assert.equal(ok.statusCode, 200);
    assert.equal(ok.headers['x-credits-charged'], '30');
    assert.equal(ok.headers['x-credits-remaining'], '70');
    assert.equal(await balance(), 70);
    assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 70);
  } finally {
    await app.close();
  }
});

// Postgres could not be asked whether a lost group charge committed (lost-answers.ts): the 503 says
// the call may have been charged, and each such call is logged with its request id.
test('a charge whose outcome was lost with the storage: 503 saying it may have been charged, logged by request id', async () => {
  const a = await h.account({ credits: 1000 });
  const { lines, stream } = logLines();
  const real = h.deps.meter;
  const meter: MeterStore = Object.create(real) as MeterStore;
  const counts = { charged: 0, notCharged: 0, unknown: 0 };
  const refunds: LostCharge[] = [];
  const lostConnection = new Error('Connection terminated unexpectedly');
  const chargedAt = new Date().toISOString();
  meter.settleTo = (id, info, to) => {
    void real.release(id).then(() => answerLost([{ requestId: info.requestId, accountId: a.accountId, amount: 100, to }], chargedAt, undefined, lostConnection, counts, { add: (c) => refunds.push(c) }));
  };
  const deps = { ...h.deps, meter };
  const app = Fastify();
  app.log = appLogger('warn', stream);
  app.setErrorHandler(errorHandler(deps));
  app.addHook('onRequest', async (request) => {
    request.auth = { keyId: 'key_t', accountId: a.accountId, planId: 'free', balance: 1000, rateLimitPerMinute: 600 };
  });
  app.get('/ok', metered(deps, (() => ({ ok: true })) as unknown as RouteHandlerMethod, { cost: 100, endpoint: 'tok', route: '/ok' }));
  try {
    const res = await app.inject({ url: '/ok' });
    assert.equal(res.statusCode, 503);
    const body = JSON.parse(res.body) as { error: { code: string; message: string; details: Record<string, unknown> }; meta: { requestId: string } };
    assert.equal(body.error.code, 'service_unavailable');
    assert.match(body.error.message, /may have been charged: if it was, the charge is refunded once the storage answers again, and GET \/api\/v1\/usage then lists the charge and its refund under this request id/);
    assert.doesNotMatch(body.error.message, /was not charged/);
    assert.deepEqual(body.error.details, { maybeCharged: true });
    assert.equal(res.headers['retry-after'], '1');
    assert.equal(counts.unknown, 1);
    // Kept to be refunded if it was charged (refunds.ts; end to end in test/scale/lost-answers.test.ts).
    assert.deepEqual(refunds, [{ accountId: a.accountId, requestId: body.meta.requestId, chargedAt }]);
    const line = lines.map((l) => JSON.parse(l) as { msg: string; requestId?: string; accountId?: string }).find((l) => /charge outcome unknown/.test(l.msg));
    assert.equal(line?.requestId, body.meta.requestId);
    assert.equal(line?.accountId, a.accountId);
  } finally {
    await app.close();
  }
});
