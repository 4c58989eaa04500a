// A real gateway on a free port (API, worker and scheduler in this process, the demo network on the
// real clock) and Debian's Chromium driven by playwright-core, for the dashboard's browser tests and
// its screenshots (scripts/dashboard-screenshots.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Dialect } from '../../src/db/connect.js';
import { DemoSource } from '../../src/sources/demo/demo-source.js';
import { demoSample, type DemoSampleResult } from '../../src/sources/demo/sample.js';
import type { Log } from '../../src/jobs/runner.js';
import { startBackground, type Background } from '../../src/wiring/background.js';
import { startHarness, type Harness, type TestAccount } from '../helpers/harness.js';

export const CHROMIUM = '/usr/bin/chromium';
const ROOT = join(import.meta.dirname, '..', '..');

export interface Gateway {
  h: Harness;
  base: string;
  account: TestAccount;
  sample: DemoSampleResult;
  /** Calls the gateway over HTTP with a key, as any client would. */
  call(path: string, opts?: { key?: string; method?: string; body?: unknown }): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

/** `npm run build`: skipped by the script itself when no source changed since the last build. */
export function buildDashboard(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startGateway(backend: Dialect, env: Record<string, string> = {}): Promise<Gateway> {
  const port = await freePort();
  const h = await startHarness(backend, { HOST: '127.0.0.1', PORT: String(port), CRAWL_INTERVAL_HOURS: '6', JOBS_POLL_MS: '100', DEMO_USER_COUNT: '5000', ...env });
  const quiet: Log = { info: () => undefined, warn: () => undefined, error: (obj, msg) => process.env.TEST_LOG && console.error(msg, obj) };
  const background: Background = await startBackground(h.deps, { log: quiet });
  await h.app.listen({ host: '127.0.0.1', port });
  const base = `http://127.0.0.1:${port}`;
  const account = await h.account({ credits: 250_000 });
  const call = async (path: string, opts: { key?: string; method?: string; body?: unknown } = {}) => {
    const res = await fetch(base + path, {
      method: opts.method ?? 'GET',
      headers: { 'x-api-key': opts.key ?? account.apiKey, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: opts.body === undefined ? null : JSON.stringify(opts.body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };
  return {
    h,
    base,
    account,
    // The demo network is deterministic from its seed: a twin names the same ids as the source behind
    // the gateway, even when that one is wrapped in simulated latency.
    sample: demoSample(new DemoSource({ seed: h.config.source.demo.seed, userCount: h.config.source.demo.userCount }), new Date()),
    call,
    async close() {
      await background.stop();
      await h.close();
    },
  };
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Chromium from Debian's package with a fresh profile; nothing is downloaded. */
export async function launchBrowser(opts: { width?: number; height?: number; downloads?: string; timezoneId?: string } = {}): Promise<Browser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'sdg-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 900 },
    acceptDownloads: true,
    ...(opts.downloads ? { downloadsPath: opts.downloads } : {}),
    ...(opts.timezoneId ? { timezoneId: opts.timezoneId } : {}),
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export const chromiumPresent = (): boolean => existsSync(CHROMIUM);

/** Signs `page` in with `key` on the page of `hash` (e.g. '#/keys'), by the form, as a person would. */
export async function signIn(page: Page, base: string, key: string, hash = ''): Promise<void> {
  await page.goto(`${base}/dashboard${hash}`);
  await page.getByLabel('API key').fill(key);
  await page.getByLabel('API key').press('Enter');
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

export interface OpenDashboard {
  g: Gateway;
  browser: Browser;
  page: Page;
  close(): Promise<void>;
}

/**
 * What most browser tests start from: the dashboard built, a gateway on the embedded store with what
 * `arrange` puts in it, and a Chromium page signed in with the gateway's account. A failure on the
 * way closes what was opened.
 */
export async function openDashboard(arrange: (g: Gateway) => Promise<void> = async () => undefined, browserOpts: Parameters<typeof launchBrowser>[0] = {}): Promise<OpenDashboard> {
  buildDashboard();
  const g = await startGateway('sqlite');
  let browser: Browser | undefined;
  try {
    await arrange(g);
    browser = await launchBrowser(browserOpts);
    const page = await browser.context.newPage();
    await signIn(page, g.base, g.account.apiKey);
    const b = browser;
    return {
      g,
      browser: b,
      page,
      async close() {
        try {
          await b.close();
        } finally {
          await g.close();
        }
      },
    };
  } catch (err) {
    await browser?.close();
    await g.close();
    throw err;
  }
}

/** Waits until `ok()` holds (checked every 50 ms), failing with `what` after `ms`. */
export async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
