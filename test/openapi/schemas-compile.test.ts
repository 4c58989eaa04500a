// Request validators and response serializers are compiled on first use (start-up time); the
// tests compile every route's at once, so a schema that does not compile fails here, not on a
// user's first request.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { buildApp } from '../../src/http/app.js';
import { lazySerializers } from '../../src/http/serializers.js';
import { validatorCompiler } from '../../src/http/validators.js';
import { loadConfig } from '../../src/config/config.js';
import { buildDeps, closeDeps } from '../../src/wiring/deps.js';
import { createTestStore } from '../helpers/backends.js';

const broken = { type: 'object', properties: { a: { type: 'no-such-type' } } };

test('a validator compiles on its first use and reports its errors as Fastify reads them', () => {
  const compiler = validatorCompiler();
  const validate = compiler({ schema: broken, httpPart: 'querystring', method: 'GET', url: '/x' });
  assert.throws(() => validate({ a: 1 }), /no-such-type|schema is invalid/, 'compiled at first use, not before');

  const good = compiler({ schema: { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] }, httpPart: 'querystring', method: 'GET', url: '/y' });
  const bad = good({ n: '0' }) as boolean;
  assert.equal(bad, false);
  assert.equal((good as unknown as { errors: Array<{ instancePath: string }> }).errors[0]?.instancePath, '/n');
  const data = { n: '5' };
  assert.equal(good(data), true);
  assert.equal((good as unknown as { errors: unknown }).errors, null);
  assert.deepEqual(data, { n: 5 }, 'text parts are coerced');
});

test('compileAll compiles what is pending and throws on a schema that does not compile', () => {
  const compiler = validatorCompiler();
  compiler({ schema: { type: 'object' }, httpPart: 'body', method: 'POST', url: '/ok' });
  compiler.compileAll();
  compiler({ schema: broken, httpPart: 'body', method: 'POST', url: '/broken' });
  assert.throws(() => compiler.compileAll());
});

test('Fastify builds every route validator and serializer before onReady, so compileAll there sees them all', async () => {
  for (const where of ['querystring', 'response'] as const) {
    const validators = validatorCompiler();
    const serializers = lazySerializers();
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: serializers } } });
    app.setValidatorCompiler(validators);
    app.addHook('onReady', async () => {
      validators.compileAll();
      serializers.compileAll();
    });
    const ref = { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } };
    const schema = where === 'querystring' ? { querystring: broken } : { response: { 200: ref } };
    app.get('/x', { schema }, async () => ({ a: 1 }));
    await assert.rejects(async () => { await app.ready(); }, Error, `a broken ${where} schema fails ready()`);
  }
});

test("every route's validators and serializers compile", async () => {
  const testStore = await createTestStore('sqlite');
  const deps = await buildDeps(loadConfig({ LOG_LEVEL: 'silent', ...testStore.env }), { store: testStore.store });
  const app = await buildApp(deps, { logger: false, compileSchemasAtReady: true });
  try {
    await app.ready();
    assert.ok(app.printRoutes().includes('tweets'), 'the routes are registered');
  } finally {
    await app.close();
    await closeDeps(deps).catch(() => undefined);
    await testStore.dispose();
  }
});
