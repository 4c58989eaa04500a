// The metering wrapper charges only answers that are 2xx, whether the handler throws or not.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Fastify, { type RouteHandlerMethod } from 'fastify';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { metered } from '../../src/http/metering.js';
import { startHarness, type Harness } from '../helpers/harness.js';

let h: Harness;
before(async () => {
  h = await startHarness('sqlite');
});
after(() => h.close());

test('a handler that sets a non-2xx status without throwing is not charged; a 2xx one is', async () => {
  const a = await h.account({ credits: 100 });
  const app = Fastify();
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
