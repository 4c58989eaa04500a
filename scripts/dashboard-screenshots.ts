// Screenshots of every dashboard page into docs/ (shown in the README), taken from a real gateway with
// the demo network: `node --import tsx scripts/dashboard-screenshots.ts`. Needs /usr/bin/chromium.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { buildDashboard, launchBrowser, startGateway } from '../test/dashboard/world.js';

const docs = join(import.meta.dirname, '..', 'docs');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

buildDashboard();
// A slow source and one account at a time, so that a crawl cycle is caught under way.
const g = await startGateway('sqlite', { CRAWL_INTERVAL_HOURS: '0.01', DEMO_LATENCY_MS: '300', CRAWL_CONCURRENCY: '1' });
const browser = await launchBrowser({ width: 1200, height: 860 });
try {
  mkdirSync(docs, { recursive: true });
  // Some history: paid reads of several kinds, a named key, three watched accounts, an export.
  const s = g.sample;
  for (let i = 0; i < 4; i++) await g.call(`/social/v1/users/by/username/${s.usernames[i]}`);
  for (let i = 0; i < 5; i++) await g.call(`/social/v1/tweets/${s.tweetIds[i]}`);
  await g.call(`/social/v1/users/${s.userIds[0]}/tweets?limit=20`);
  await g.call(`/social/v1/communities/${s.communityIds[0]}`);
  await g.call('/api/v1/api-keys', { method: 'POST', body: { name: 'reporting job' } });
  await g.call('/social/v1/bulk-export/watchlist/batch', { method: 'POST', body: { items: s.usernames.slice(0, 3).map((username) => ({ username })) } });
  await g.call('/social/v1/bulk-export/watchlist/batch', { method: 'POST', body: { items: s.userIds.slice(0, 12).map((socialUserId) => ({ socialUserId })) } });
  await sleep(12_000);
  const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
  const start = new Date(end.getTime() - 24 * 3_600_000);
  await g.call('/social/v1/bulk-export/exports/generate', { method: 'POST', body: { startDate: start.toISOString(), endDate: end.toISOString() } });
  await sleep(2_000);

  const page = await browser.context.newPage();
  await page.goto(`${g.base}/dashboard`);
  await page.screenshot({ path: join(docs, 'dashboard-signin.png') });
  await page.getByLabel('API key').fill(g.account.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('charts').locator('canvas').first().waitFor();
  await sleep(300);
  await page.screenshot({ path: join(docs, 'dashboard-overview.png'), fullPage: true });
  await page.goto(`${g.base}/dashboard#/crawl`);
  // Waits for a cycle under way, to show its progress bar.
  await page.locator('#crawl-progress').waitFor({ timeout: 60_000 }).catch(() => undefined);
  await page.screenshot({ path: join(docs, 'dashboard-crawl.png'), fullPage: true });
  // The watchlist right after a pasted list's batch completed, with each item's outcome.
  await page.goto(`${g.base}/dashboard#/watchlist`);
  await page.getByLabel('Usernames or numeric ids to watch').fill(`@${s.usernames[0]}\n${s.usernames[3]}\n${s.usernames[4]}\nnobody_by_this_name`);
  await page.getByRole('button', { name: 'Add to watchlist' }).click();
  await page.getByRole('heading', { name: /Batch 1 of 1: completed/ }).waitFor({ timeout: 60_000 });
  await sleep(500);
  await page.screenshot({ path: join(docs, 'dashboard-watchlist.png'), fullPage: true });
  for (const [id, wait] of [
    ['keys', 'keys'],
    ['exports', 'exports'],
    ['usage', 'ledger'],
  ] as const) {
    await page.goto(`${g.base}/dashboard#/${id}`);
    await page.getByTestId(wait).waitFor();
    await sleep(500);
    await page.screenshot({ path: join(docs, `dashboard-${id}.png`), fullPage: true });
  }
  // The overview on a phone.
  const phone = await browser.context.newPage();
  await phone.setViewportSize({ width: 390, height: 844 });
  await phone.goto(`${g.base}/dashboard`);
  await phone.getByLabel('API key').fill(g.account.apiKey);
  await phone.getByRole('button', { name: 'Sign in' }).click();
  await phone.getByTestId('charts').locator('canvas').first().waitFor();
  await sleep(300);
  await phone.screenshot({ path: join(docs, 'dashboard-phone.png') });
  console.log(`screenshots written to ${docs}`);
} finally {
  await browser.close();
  await g.close();
}
