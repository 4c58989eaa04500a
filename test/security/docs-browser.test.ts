// /docs in a real browser (Debian's Chromium): Swagger UI renders every operation under the page's
// Content-Security-Policy, with no violation reported and no error in the console.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { chromiumPresent, launchBrowser, startGateway, type Browser, type Gateway } from '../dashboard/world.js';

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';

let g: Gateway;
let browser: Browser;
before(async () => {
  if (skip) return;
  g = await startGateway('sqlite');
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await g?.close();
});

test('/docs renders every operation with no CSP violation or console error', { skip }, async () => {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${g.base}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  const operations = await page.locator('.opblock').count();
  const doc = (await (await fetch(`${g.base}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.values(doc.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
  assert.equal(operations, documented);
  // Give swagger-ui's late scripts a moment to report anything.
  await page.waitForTimeout(500);
  assert.deepEqual(problems, []);
  await page.close();
});
