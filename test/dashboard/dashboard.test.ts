// The dashboard in a real browser: Debian's Chromium driven by playwright-core against a real gateway
// (API, worker and scheduler, the demo network, the embedded store). One signed-in tab walks through
// the pages in order, as a customer would.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { backends } from '../helpers/backends.js';
import { buildDashboard, chromiumPresent, launchBrowser, startGateway, type Browser, type Gateway } from './world.js';

const A11Y_CHECK = readFileSync(join(import.meta.dirname, 'a11y-check.js'), 'utf8');
const HTML_NAME = '<img src=x onerror="document.body.dataset.pwned=1"><b>bold</b>';
const HTML_USERNAME = '<script>document.body.dataset.pwned=2</script>';

// Code run in the page by evaluate(), typed here without the DOM library (this program runs on Node).
interface InPage {
  sessionStorage: { length: number; getItem(key: string): string | null };
  localStorage: { length: number };
  document: {
    body: { dataset: Record<string, string | undefined> };
    activeElement: { textContent: string | null } | null;
    querySelectorAll(selector: string): { length: number };
  };
}
interface Canvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } };
}

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';

// The browser runs in India's time (+05:30 all year): the dashboard's local days, hours and export
// range must reach the API in that offset, not in the machine's.
const TZ = 'Asia/Kolkata';
const TZ_OFFSET_MS = 330 * 60_000;

for (const backend of backends()) describe(`dashboard in Chromium (${backend})`, { skip }, () => {
  let g: Gateway;
  let browser: Browser;
  let page: Page;
  let downloads: string;
  const requested: string[] = [];
  const problems: string[] = [];

  before(async () => {
    buildDashboard();
    g = await startGateway(backend);
    // Real paid calls, so the ledger has charges of several endpoints in the last hour.
    const s = g.sample;
    for (const u of s.usernames.slice(0, 3)) assert.equal((await g.call(`/social/v1/users/by/username/${u}`)).status, 200);
    for (const t of s.tweetIds.slice(0, 2)) assert.equal((await g.call(`/social/v1/tweets/${t}`)).status, 200);
    assert.equal((await g.call(`/social/v1/communities/${s.communityIds[0]}`)).status, 200);
    downloads = mkdtempSync(join(tmpdir(), 'sdg-downloads-'));
    browser = await launchBrowser({ downloads, timezoneId: TZ });
    page = await browser.context.newPage();
    browser.context.on('request', (r) => requested.push(r.url()));
    page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
    page.on('pageerror', (e) => problems.push(e.message));
  });
  after(async () => {
    await browser?.close();
    await g?.close();
    if (downloads) rmSync(downloads, { recursive: true, force: true });
  });

  const go = async (hash: string, testId: string) => {
    await page.getByRole('link', { name: hash, exact: true }).click();
    await page.getByTestId(testId).waitFor();
  };

  test('/dashboard is served from the build with a CSP allowing no inline script, and / links it', async () => {
    const res = await fetch(`${g.base}/dashboard`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    const js = await fetch(`${g.base}/dashboard/assets/dashboard.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /javascript/);
    assert.equal(js.headers.get('content-security-policy'), csp);
    const missing = await fetch(`${g.base}/dashboard/assets/nope.js`);
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as { error: { code: string } }).error.code, 'not_found');
    assert.match(await (await fetch(`${g.base}/`)).text(), /href="\/dashboard"/);
  });

  test('a wrong key is refused with a clear message and nothing is kept', async () => {
    await page.goto(`${g.base}/dashboard`);
    await page.getByLabel('API key').fill('sdg_live_notarealkey000000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.match(await alert.innerText(), /The gateway refused this key: it is unknown, malformed or revoked/);
    assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.length), 0);
    assert.equal(await page.getByRole('link', { name: 'Keys' }).count(), 0);
  });

  test('signing in (by keyboard) shows the balance, plan and rate limit', async () => {
    await page.getByLabel('API key').fill(g.account.apiKey);
    await page.getByLabel('API key').press('Enter');
    await page.getByTestId('balance').waitFor();
    const balance = (await g.call('/api/v1/credits/balance')).body as { data: { balance: number } };
    assert.equal(balance.data.balance, 250_000 - 600);
    assert.equal((await page.getByTestId('balance').innerText()).replace(/\D/g, ''), String(balance.data.balance));
    assert.equal(await page.getByTestId('plan').innerText(), 'Free');
    assert.equal((await page.getByTestId('rate-limit').innerText()).replace(/\D/g, ''), '1000000');
    // The key lives in this tab's sessionStorage only.
    assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.getItem('sdg.dashboard.apiKey')), g.account.apiKey);
    assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).localStorage.length), 0);
  });

  test('the charts are drawn from the ledger: totals per endpoint equal its sums', async () => {
    const charts = page.getByTestId('charts');
    await charts.locator('canvas').nth(1).waitFor();
    assert.equal(await charts.locator('.uplot').count(), 2);
    // Something was painted on each canvas (uPlot draws axes, grid and lines there).
    const painted = await charts.locator('canvas').evaluateAll((cs) =>
      (cs as unknown as Canvas[]).map((c) => {
        const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0;
        for (let i = 3; i < px.length; i += 4) if (px[i]! > 0) n++;
        return n;
      }),
    );
    assert.ok(painted.every((n) => n > 1000), `painted pixels: ${painted}`);
    // The window went out in the browser's offset: the last 24 local hours.
    const asked = requested.filter((u) => u.includes('/api/v1/usage/summary')).map((u) => new URL(u).searchParams);
    assert.ok(asked.some((q) => q.get('granularity') === 'hour' && q.get('from')!.endsWith(':00:00+05:30')), asked.map(String).join(' '));
    const legend = await charts.locator('.legend').first().innerText();
    for (const ep of ['getUserByUsername', 'getTweet', 'getCommunity']) assert.ok(legend.includes(ep), legend);

    const rows = await g.h.deps.store.db.selectFrom('ledger_entries').select(['endpoint', 'amount']).where('account_id', '=', g.account.accountId).where('kind', '=', 'charge').execute();
    const want = new Map<string, { calls: number; credits: number }>();
    for (const r of rows) {
      const w = want.get(r.endpoint!) ?? { calls: 0, credits: 0 };
      w.calls++;
      w.credits -= Number(r.amount);
      want.set(r.endpoint!, w);
    }
    const shown = await page.getByTestId('endpoint-totals').locator('tbody tr').evaluateAll((trs) =>
      trs.map((tr) => Array.from(tr.children).map((c) => (c as unknown as { innerText: string }).innerText.trim())),
    );
    const table = new Map(shown.map(([ep, calls, credits]) => [ep!, { calls: Number(calls!.replace(/\D/g, '')), credits: Number(credits!.replace(/\D/g, '')) }]));
    for (const [ep, w] of want) assert.deepEqual(table.get(ep), w, ep);
    assert.deepEqual(table.get('All'), { calls: rows.length, credits: -rows.reduce((n, r) => n + Number(r.amount), 0) });
    // The other periods read the same charges by day.
    await page.getByRole('button', { name: 'Last week' }).click();
    await page.getByRole('status').filter({ hasText: 'by day' }).waitFor();
    assert.match(await page.getByTestId('endpoint-totals').locator('tr.total').innerText(), new RegExp(`${rows.length}\\s+600`));
  });

  test('a key is created (secret shown once), used, and revoked after a confirmation; its HTML name shows as text', async () => {
    await go('Keys', 'keys');
    await page.getByLabel('Name of the new key (optional)').fill(HTML_NAME);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('new-key-secret').inputValue();
    assert.match(secret, /^sdg_live_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText(/Copied|Selected/).waitFor();
    // The name is shown as the characters typed, never as markup.
    const row = page.locator('tr', { hasText: HTML_NAME });
    await row.waitFor();
    assert.equal(await row.locator('.key-name').innerText(), HTML_NAME);
    assert.equal(await page.getByTestId('keys').locator('img, b').count(), 0);

    assert.equal((await g.call('/echo/v1/hello', { key: secret })).status, 200);
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByTestId('new-key-secret').waitFor({ state: 'detached' }); // the secret is not shown again

    // The new key signs in another tab (each tab keeps its own key), where it is marked as that tab's.
    const other = await browser.context.newPage();
    await other.goto(`${g.base}/dashboard#/keys`);
    await other.getByLabel('API key').fill(secret);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.locator('tr', { hasText: HTML_NAME }).getByText('this session').waitFor();
    assert.equal(await other.locator('tr', { hasText: HTML_NAME }).locator('img, b').count(), 0);

    // The question takes the focus on its safe answer; Escape cancels and the key still works.
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.activeElement?.textContent === 'Cancel', undefined, { timeout: 5_000 });
    await page.keyboard.press('Escape');
    await row.getByRole('button', { name: /^Revoke/ }).waitFor();
    // The focus goes back to the row's Revoke button, not to the page's body.
    await page.waitForFunction(() => (globalThis as unknown as InPage).document.activeElement?.textContent === 'Revoke', undefined, { timeout: 5_000 });
    assert.equal((await g.call('/echo/v1/hello', { key: secret })).status, 200);
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await row.getByText(/^revoked/).waitFor();
    const refused = await g.call('/echo/v1/hello', { key: secret });
    assert.equal(refused.status, 401);

    // The other tab's next call is refused: it signs out, saying why, and forgets the key.
    await other.getByRole('link', { name: 'Overview', exact: true }).click();
    await other.getByRole('status').filter({ hasText: 'You were signed out: The API key is not valid' }).waitFor();
    assert.equal(await other.evaluate(() => (globalThis as unknown as InPage).sessionStorage.length), 0);
    await other.close();
  });

  test('Show picks all, the active or the revoked keys (the API\'s ?status=)', async () => {
    await go('Keys', 'keys');
    const keys = page.getByTestId('keys');
    // The key revoked above, and the one this tab is signed in with.
    await keys.locator('tr', { hasText: HTML_NAME }).getByText(/^revoked/).waitFor();
    // The caption follows the choice at once; the rows once their page has loaded (aria-busy false).
    const loaded = () => page.locator('[role="region"][aria-label="API keys"][aria-busy="false"]').waitFor();
    await page.getByLabel('Show').selectOption('active');
    await keys.locator('caption', { hasText: '(active only)' }).waitFor();
    await loaded();
    await keys.getByText('this session').waitFor();
    assert.equal(await keys.locator('tr', { hasText: HTML_NAME }).count(), 0);
    assert.equal(await keys.locator('tbody tr', { hasText: /revoked/ }).count(), 0);
    await page.getByLabel('Show').selectOption('revoked');
    await keys.locator('caption', { hasText: '(revoked only)' }).waitFor();
    await loaded();
    await keys.locator('tr', { hasText: HTML_NAME }).waitFor();
    assert.equal(await keys.getByText('this session').count(), 0);
    assert.equal(await keys.locator('tbody tr', { hasText: /active/ }).count(), 0);
    await page.getByLabel('Show').selectOption('');
    await keys.getByText('this session').waitFor();
  });

  test('a long name wraps; a key that cannot be checked on reload is kept with a retry; revoking the tab\'s own key warns and signs out', async () => {
    const long = 'W'.repeat(100);
    const made = await g.call('/api/v1/api-keys', { method: 'POST', body: { name: long } });
    assert.equal(made.status, 201);
    const secret = (made.body as { data: { key: string } }).data.key;
    const tab = await browser.context.newPage();
    await tab.setViewportSize({ width: 1280, height: 900 });
    await tab.goto(`${g.base}/dashboard#/keys`);
    await tab.getByLabel('API key').fill(secret);
    await tab.getByRole('button', { name: 'Sign in' }).click();
    const row = tab.locator('tr', { hasText: long });
    await row.getByText('this session').waitFor();
    const width = await tab.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } }; innerWidth: number });
      return { page: d.document.documentElement.scrollWidth, view: d.innerWidth };
    });
    assert.ok(width.page <= width.view, `a 100-character name widened the page to ${width.page}px (${width.view}px wide)`);

    // The gateway answers 503 when the tab reloads: the key is kept, the tab says so and retries.
    await tab.route('**/api/v1/account', (r) => r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"code":"service_unavailable","message":"The store cannot be reached."},"meta":{"requestId":"req_x"}}' }));
    await tab.reload();
    await tab.getByText('Your key could not be checked').waitFor();
    assert.equal(await tab.evaluate(() => (globalThis as unknown as InPage).sessionStorage.length), 1, 'still signed in');
    await tab.unroute('**/api/v1/account');
    await tab.getByRole('button', { name: 'Try again' }).click();
    await tab.getByRole('link', { name: 'Keys', exact: true }).waitFor();

    // Revoking the key the tab is signed in with: the question says so, and the tab signs out.
    await tab.getByRole('link', { name: 'Keys', exact: true }).click();
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await row.getByText('It is the key this tab is signed in with: the tab signs out.').waitFor();
    await row.getByRole('button', { name: 'Yes, revoke' }).click();
    await tab.getByRole('status').filter({ hasText: `You were signed out: You revoked “${long}”, the key this tab was signed in with.` }).waitFor();
    assert.equal(await tab.evaluate(() => (globalThis as unknown as InPage).sessionStorage.length), 0);
    assert.equal((await g.call('/echo/v1/hello', { key: secret })).status, 401);
    await tab.close();
  });

  test('three usernames are added in a batch whose outcomes show as it completes; a pasted line with HTML is refused as text', async () => {
    await go('Watchlist', 'watchlist');
    const names = g.sample.usernames.slice(0, 3);
    await page.getByLabel('Usernames or numeric ids to watch').fill(`@${names[0]}\n${names[1]}, ${names[2]}\n<b>nope</b>`);
    await page.getByRole('button', { name: 'Add to watchlist' }).click();
    const batch = page.getByTestId('batch');
    await batch.getByRole('heading', { name: 'Batch 1 of 1: completed' }).waitFor({ timeout: 30_000 });
    assert.equal(await batch.locator('tr[data-status="added"]').count(), 3);
    assert.match(await batch.innerText(), /3 of 3 done: 3 succeeded, 0 failed/);
    const refused = page.locator('.refused');
    assert.equal(await refused.locator('li').innerText(), '<b>nope</b>');
    assert.equal(await refused.locator('b').count(), 0);
    for (const n of names) await page.getByTestId('watchlist').getByRole('cell', { name: n, exact: true }).waitFor();
  });

  test('a batch the gateway never received keeps its lines in the box, saying so', async () => {
    await page.route('**/social/v1/bulk-export/watchlist/batch', (r) => r.abort('connectionrefused'));
    const seen = problems.length;
    try {
      const box = page.getByLabel('Usernames or numeric ids to watch');
      await box.fill('never_sent_1\nnever_sent_2');
      await page.getByRole('button', { name: 'Add to watchlist' }).click();
      await page.getByTestId('batch').getByRole('heading', { name: /Batch 1 of 1: not sent: the gateway could not be reached/ }).waitFor();
      assert.equal(await box.inputValue(), 'never_sent_1\nnever_sent_2');
    } finally {
      await page.unroute('**/social/v1/bulk-export/watchlist/batch');
    }
    // The refused connection this test made is the browser's console line, not a fault of the page.
    problems.splice(seen, problems.length - seen, ...problems.slice(seen).filter((p) => !/ERR_CONNECTION_REFUSED/.test(p)));
    await page.getByLabel('Usernames or numeric ids to watch').fill('');
  });

  test('the crawl page shows the cycle that backfilled them', async () => {
    await go('Crawl', 'last-cycle');
    await page.getByTestId('last-cycle').getByText(/3 done, 0 failed, of 3/).waitFor({ timeout: 60_000 });
  });

  test('an export for a range picked in the browser is followed to completion, downloaded, and its sha256 matches', async () => {
    await go('Exports', 'exports');
    const end = new Date();
    end.setSeconds(0, 0);
    const start = new Date(end.getTime() - 24 * 3_600_000);
    const local = (d: Date) => new Date(d.getTime() + TZ_OFFSET_MS).toISOString().slice(0, 16);
    await page.getByLabel('Start (your local time)').fill(local(start));
    await page.getByLabel('End (exclusive)').fill(local(end));
    await page.getByRole('button', { name: 'Generate export' }).click();
    const current = page.getByTestId('current-export');
    await page.locator('[data-testid="current-export"][data-status="completed"]').waitFor({ timeout: 60_000 });
    const sha = await current.getByTestId('current-sha256').innerText();
    assert.match(sha, /^[0-9a-f]{64}$/);
    const id = (await current.getByRole('heading').innerText()).replace('Export ', '');
    const record = ((await g.call(`/social/v1/bulk-export/exports/${id}`)).body as { data: { tweetCount: number; sha256: string; startDate: string; endDate: string } }).data;
    assert.equal(record.sha256, sha);
    assert.ok(record.tweetCount > 0, 'the watched accounts have tweets in the last day');
    assert.equal(Date.parse(record.startDate), start.getTime());
    assert.equal(Date.parse(record.endDate), end.getTime());

    const [download] = await Promise.all([page.waitForEvent('download'), current.getByRole('button', { name: `Download export ${id}` }).click()]);
    const file = join(downloads, 'export.jsonl.gz');
    await download.saveAs(file);
    assert.equal(createHash('sha256').update(readFileSync(file)).digest('hex'), sha);
    // The list shows it with its count, size and hash.
    const listed = page.locator(`tr[data-export-id="${id}"]`);
    await listed.getByText('completed').waitFor();
    assert.ok((await listed.innerText()).includes(sha));
  });

  test('the usage page filters the ledger by endpoint and pages through it', async () => {
    // 25 more charges of one endpoint: 27 in all, more than the page of 25.
    for (let i = 0; i < 25; i++) assert.equal((await g.call(`/social/v1/tweets/${g.sample.tweetIds[i % 3]}`)).status, 200);
    await go('Usage', 'ledger');
    const rows = page.getByTestId('ledger').locator('tbody tr');
    const endpoints = () => page.getByTestId('ledger').locator('tbody tr td:nth-child(3)').allInnerTexts();
    const idle = () => page.locator('[role="region"][aria-label="Ledger"][aria-busy="false"]').waitFor();
    await page.getByLabel('Endpoint').selectOption('getTweet');
    await page.getByTestId('ledger').getByText('(getTweet only)').waitFor();
    await idle();
    assert.equal(await rows.count(), 25);
    assert.ok((await endpoints()).every((e) => e === 'getTweet'));
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2').waitFor();
    await idle();
    assert.deepEqual(await endpoints(), ['getTweet', 'getTweet']);
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByText('Page 1').waitFor();
    await idle();
    assert.equal(await rows.count(), 25);
    // Another endpoint starts again from its own first page.
    await page.getByLabel('Endpoint').selectOption('getCommunity');
    await page.getByTestId('ledger').getByText('(getCommunity only)').waitFor();
    await idle();
    assert.deepEqual(await endpoints(), ['getCommunity']);
    // The filter is in the URL: a reload keeps it.
    assert.match(page.url(), /#\/usage\?endpoint=getCommunity$/);
    await page.reload();
    await page.getByTestId('ledger').getByText('(getCommunity only)').waitFor();
    await idle();
    assert.deepEqual(await endpoints(), ['getCommunity']);
    assert.equal(await page.getByLabel('Endpoint').inputValue(), 'getCommunity');
  });

  test('a username from the store that holds HTML is shown as text, and that account is removed', async () => {
    await g.h.deps.store.db.insertInto('watchlist_entries').values({ account_id: g.account.accountId, social_user_id: '1', username: HTML_USERNAME, added_at: new Date().toISOString() }).execute();
    await go('Crawl', 'last-cycle');
    await go('Watchlist', 'watchlist');
    const cell = page.getByTestId('watchlist').getByRole('cell', { name: HTML_USERNAME, exact: true });
    await cell.waitFor();
    assert.equal(await page.getByTestId('watchlist').locator('script').count(), 0);

    await page.getByRole('button', { name: `Stop watching ${HTML_USERNAME}` }).click();
    await cell.waitFor({ state: 'detached', timeout: 30_000 });
    const left = await g.h.deps.store.db.selectFrom('watchlist_entries').select('social_user_id').where('account_id', '=', g.account.accountId).execute();
    assert.equal(left.length, 3);
    assert.ok(!left.some((e) => e.social_user_id === '1'));
  });

  test('nothing ran that should not have: no script from markup, no key in a URL, no CSP report', async () => {
    assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).document.body.dataset.pwned ?? null), null);
    assert.ok(requested.length > 10);
    for (const url of requested) assert.ok(!url.includes(g.account.apiKey), `the key appeared in ${url}`);
    assert.deepEqual(problems.filter((p) => !/401|Unauthorized/.test(p)), []);
  });

  test('every page has labelled controls, named buttons, readable contrast and fits a phone', async () => {
    const pages: Array<[string, string]> = [
      ['Overview', 'endpoint-totals'],
      ['Keys', 'keys'],
      ['Watchlist', 'watchlist'],
      ['Crawl', 'last-cycle'],
      ['Exports', 'exports'],
      ['Usage', 'ledger'],
    ];
    // The checker itself finds what it looks for.
    const bad = await browser.context.newPage();
    await bad.setContent('<h1>x</h1><p style="color:#aaa">faint</p><input id="q"><button></button><div style="width:2000px">wide</div>');
    const found = await bad.evaluate<string[]>(A11Y_CHECK);
    await bad.close();
    for (const p of [/contrast 2\.\d+:1 .*faint/, /control without a label: input#q/, /button or link without a name/, /the page is \d+px wide/]) assert.ok(found.some((f) => p.test(f)), `${p} in ${found.join('; ')}`);

    for (const viewport of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(viewport);
      for (const [name, testId] of pages) {
        await go(name, testId);
        assert.deepEqual(await page.evaluate<string[]>(A11Y_CHECK), [], `${name} at ${viewport.width}px`);
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  test('signing out forgets the key', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').waitFor();
    // The focus is on the key box (set once the form is on the page).
    await page.waitForFunction(() => (globalThis as unknown as { document: { activeElement: { id: string } | null } }).document.activeElement?.id === 'api-key', undefined, { timeout: 5_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as InPage).sessionStorage.length), 0);
    assert.deepEqual(await page.evaluate<string[]>(A11Y_CHECK), [], 'the sign-in page');
  });
});
