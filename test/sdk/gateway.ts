// The real gateway for the SDK's tests: the app built by the harness on SQLite, listening on a
// loopback port, with the demo network on the wall clock, a fixed wallet, and the background roles
// (batches, the crawl, exports) running by themselves as under `sdg serve`.
import { StaticWalletService } from '../../src/connectors/wallet/index.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample, type DemoSampleResult } from '../../src/sources/demo/sample.js';
import { defaultRetryPolicy } from '../../src/sources/resilience.js';
import { startBackground, type Background } from '../../src/wiring/background.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';
import { freePort } from '../helpers/processes.js';
import { useSource } from '../helpers/social.js';

export const WALLET = '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1';
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

export interface Gateway {
  h: Harness;
  url: string;
  sample: DemoSampleResult;
  account(opts?: { credits?: number; rateLimitPerMinute?: number }): Promise<TestAccount>;
  /** Stops the worker and scheduler (jobs stay queued) until startJobs(). */
  stopJobs(): Promise<void>;
  startJobs(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(env: Record<string, string> = {}): Promise<Gateway> {
  const port = await freePort();
  const source = new DemoSource({ seed: 7, userCount: 2_000 });
  const h = await startHarness('sqlite', { ALLOWED_HOSTS: `127.0.0.1:${port}`, JOBS_POLL_MS: '20', ...env }, (deps) => {
    useSource(source)(deps);
    deps.wallet = new StaticWalletService({ balances: { ethereum: { [WALLET]: 1_500_000_000_000_000_000n } } });
    deps.bulk.retry = { ...defaultRetryPolicy, baseDelayMs: 5, maxDelayMs: 20 };
  });
  await h.app.listen({ port, host: '127.0.0.1' });
  const start = () => startBackground(h.deps, { roles: ['worker', 'scheduler'], log: silent });
  let bg: Background | undefined = await start();
  return {
    h,
    url: `http://127.0.0.1:${port}`,
    sample: demoSample(source, new Date()),
    account: (opts) => h.account(opts),
    async stopJobs() {
      await bg?.stop();
      bg = undefined;
    },
    async startJobs() {
      bg ??= await start();
    },
    async close() {
      // Jobs still queued are let finish first: a test ends on its assertions, not mid-export.
      if (bg) await idle(h);
      await bg?.stop();
      await h.close();
    },
  };
}

/** Waits (at most 10 s) until no export or watchlist batch is queued or running. */
async function idle(h: Harness): Promise<void> {
  const db = h.deps.store.db;
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const exports = await db.selectFrom('exports').select('id').where('status', 'in', ['queued', 'running']).limit(1).execute();
    const batches = await db.selectFrom('watchlist_batches').select('id').where('status', 'in', ['queued', 'processing']).limit(1).execute();
    if (exports.length === 0 && batches.length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
