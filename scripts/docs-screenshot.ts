// A screenshot of /docs (Swagger UI over /openapi.json) into docs/docs-page.png, shown in the
// README: `node --import tsx scripts/docs-screenshot.ts`. Needs /usr/bin/chromium. It waits until
// the UI has rendered the operations from the document, not merely until the page's HTML arrived.
import { join } from 'node:path';
import { launchBrowser, startGateway } from '../test/dashboard/world.js';

const g = await startGateway('sqlite');
const browser = await launchBrowser({ width: 1200, height: 900 });
try {
  const page = await browser.context.newPage();
  await page.goto(`${g.base}/docs`, { waitUntil: 'networkidle' });
  // Swagger UI renders the operations after it fetched and parsed the document.
  await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
  await page.locator('.opblock-summary-path', { hasText: '/social/v1/tweets/{id}' }).first().waitFor();
  await page.screenshot({ path: join(import.meta.dirname, '..', 'docs', 'docs-page.png') });
} finally {
  await browser.close();
  await g.close();
}
