// Builds the real app on a real store for a test, with factories for accounts and keys.
import { createAccount, createKey } from '../../src/accounts/accounts-repo.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { grant } from '../../src/credits/credits-repo.js';
import { buildApp } from '../../src/http/app.js';
import type { App } from '../../src/http/types.js';
import type { Deps } from '../../src/wiring/deps.js';
import type { Dialect } from '../../src/db/connect.js';
import { buildDeps, closeDeps } from '../../src/wiring/deps.js';
import { createTestStore, type TestStore } from './backends.js';

export interface TestAccount {
  accountId: string;
  apiKey: string;
  keyId: string;
}

export interface Harness {
  app: App;
  deps: Deps;
  config: Config;
  testStore: TestStore;
  account(opts?: { credits?: number; planId?: string; rateLimitPerMinute?: number }): Promise<TestAccount>;
  close(): Promise<void>;
}

export async function startHarness(dialect: Dialect, env: Record<string, string> = {}, tweak?: (deps: Deps) => void): Promise<Harness> {
  const testStore = await createTestStore(dialect);
  // Every injected request comes from one address: the per-address limit on failed keys is off
  // unless a test sets it (test/security/abuse.test.ts).
  const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_FAILURES_PER_MINUTE: '1000000', ...testStore.env, ...env });
  const deps = await buildDeps(config, { store: testStore.store });
  tweak?.(deps);
  const app = await buildApp(deps, { validateResponses: true, logger: process.env.TEST_LOG ? { level: 'error' } : false });
  await app.ready();
  return {
    app,
    deps,
    config,
    testStore,
    async account(opts = {}) {
      const { accountId } = await createAccount(deps.store.db, {
        name: 'test',
        planId: opts.planId ?? config.defaultPlanId,
        rateLimitPerMinute: opts.rateLimitPerMinute ?? 1_000_000,
      });
      const credits = opts.credits ?? 10_000;
      if (credits > 0) await grant(deps.store.db, accountId, credits, 'test');
      const k = await createKey(deps.store.db, accountId, 'test');
      return { accountId, apiKey: k.key, keyId: k.id };
    },
    async close() {
      await app.close();
      await closeDeps(deps).catch(() => undefined);
      await testStore.dispose();
    },
  };
}

export function json<T = Record<string, unknown>>(res: { body: string }): T {
  return JSON.parse(res.body) as T;
}

/** Asserts the contract's error envelope and returns its error. */
export function errorOf(res: { body: string; headers: Record<string, unknown> }): { code: string; message: string; details?: Record<string, unknown> } {
  const b = json<{ error: { code: string; message: string; details?: Record<string, unknown> }; meta: { requestId: string } }>(res);
  if (!b.error || typeof b.error.code !== 'string' || typeof b.error.message !== 'string') throw new Error(`not an error envelope: ${res.body}`);
  if (b.meta.requestId !== res.headers['x-request-id']) throw new Error('meta.requestId differs from X-Request-Id');
  return b.error;
}
