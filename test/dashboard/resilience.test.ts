// The dashboard when the gateway is busy, slow or failing, in Chromium against a real gateway whose
// answers the browser intercepts where a test needs a 429, a 503 or no answer at all. The page's
// clock is Playwright's fake one where waits matter (3 s polls, a 20 s timeout), so no test sleeps them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page, Route } from 'playwright-core';
import { buildDashboard, chromiumPresent, launchBrowser, signIn, startGateway, until, type Browser, type Gateway } from './world.js';

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';

/** What a tab in the background reports (document.hidden), and the event the browser sends with it. */
const setHidden = (page: Page, hidden: boolean) =>
  page.evaluate(`(() => {
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} });
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${hidden ? 'hidden' : 'visible'}' });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);

const envelope = (code: string, message: string) => JSON.stringify({ error: { code, message }, meta: { requestId: 'req_test' } });
const unavailable = (r: Route) => r.fulfill({ status: 503, contentType: 'application/json', body: envelope('service_unavailable', 'The store cannot be reached.') });
/** A request the gateway never answers. */
const never = () => undefined;

describe('dashboard when the gateway is busy, slow or failing', { skip }, () => {
  let g: Gateway;
  let browser: Browser;

  before(async () => {
    buildDashboard();
    g = await startGateway('sqlite');
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await g?.close();
  });

  test('the crawl page reads its status only while the tab is shown, waits as long as a 429 asks, and says a repeated failure once', async () => {
    const page = await browser.context.newPage();
    await page.clock.install();
    let reads = 0;
    let refuse = false;
    await page.route('**/social/v1/bulk-export/crawl-status', (r) => {
      reads++;
      // The limiter's message names the seconds left, so it differs from one 429 to the next.
      if (refuse) return r.fulfill({ status: 429, headers: { 'retry-after': '30' }, contentType: 'application/json', body: envelope('rate_limited', `Rate limit of 5 requests a minute reached; retry in ${60 - reads} s.`) });
      return r.continue();
    });
    await signIn(page, g.base, g.account.apiKey, '#/crawl');
    await page.getByTestId('last-cycle').waitFor();
    await until(() => reads === 1, 'the first read');

    // Shown: read again after 3 s.
    await page.clock.fastForward(3_100);
    await until(() => reads === 2, 'a read 3 s later');

    // Hidden: nothing, however long; shown again: a read at once.
    await setHidden(page, true);
    await page.clock.fastForward(120_000);
    await page.waitForTimeout(300);
    assert.equal(reads, 2, 'no read while the tab is hidden');
    await setHidden(page, false);
    await until(() => reads === 3, 'a read when the tab is shown again');

    // 429 with Retry-After: 30: the next read waits the 30 s, not 3 (nor 6, doubled).
    refuse = true;
    await page.clock.fastForward(3_100);
    await until(() => reads === 4, 'the read refused');
    const failed = page.getByTestId('load-failed');
    await failed.getByRole('alert').getByText('Rate limit of 5 requests a minute reached').waitFor();
    assert.match(await failed.innerText(), /The crawl shown below is from an earlier load \(read at .+\) and may be out of date/);
    await page.getByTestId('last-cycle').waitFor(); // the last figures are still there, marked above
    await page.evaluate(`(() => {
      window.mutations = 0;
      new MutationObserver((m) => (window.mutations += m.length)).observe(document.querySelector('[role="alert"]'), { subtree: true, childList: true, characterData: true });
    })()`);
    await page.clock.fastForward(20_000);
    await page.waitForTimeout(300);
    assert.equal(reads, 4, 'no read before Retry-After');
    await page.clock.fastForward(10_500);
    await until(() => reads === 5, 'a read once Retry-After has passed');
    // The same refusal again (another number of seconds in it): the alert is left as it was, not re-announced.
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate('window.mutations'), 0, 'the alert was not changed');

    // Try again reads at once; a success clears the alert and the mark.
    refuse = false;
    await failed.getByRole('button', { name: 'Try again' }).click();
    await failed.waitFor({ state: 'detached' });
    assert.equal(reads, 6);
    await page.close();
  });

  test('a call that never answers ends after 20 s with the usual error, Try again and Sign out', async () => {
    const page = await browser.context.newPage();
    await page.clock.install();
    await signIn(page, g.base, g.account.apiKey);
    await page.route('**/api/v1/account', never);
    await page.reload();
    const checking = page.getByText('Checking your key…');
    await checking.waitFor();
    await page.clock.fastForward(19_000);
    await page.waitForTimeout(200);
    assert.equal(await checking.count(), 1, 'still waiting before 20 s');
    await page.clock.fastForward(1_500);
    await page.getByText('Your key could not be checked').waitFor();
    assert.match(await page.locator('.error').innerText(), /The gateway did not answer within 20 seconds/);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('balance').waitFor();

    // A page's list the same: its error with Try again, which then loads it.
    await page.route((u) => u.pathname === '/api/v1/api-keys', never);
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.clock.fastForward(21_000);
    const failed = page.getByTestId('load-failed');
    await failed.getByText('The gateway did not answer within 20 seconds').waitFor();
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await failed.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('keys').locator('tbody tr').first().waitFor();
    await failed.waitFor({ state: 'detached' });
    await page.close();
  });

  test('a failed load shows an error with Try again on each page, and figures kept from before are marked as such', async () => {
    const page = await browser.context.newPage();
    await signIn(page, g.base, g.account.apiKey);
    await page.getByTestId('balance').waitFor();
    const balance = await page.getByTestId('balance').innerText();

    // The Overview reads the account again on arrival; when that fails the cards keep the earlier
    // figures, said to be earlier ones.
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.route('**/api/v1/account', unavailable);
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    const failed = page.getByTestId('load-failed');
    await failed.getByRole('alert').getByText('The store cannot be reached.').waitFor();
    assert.match(await failed.innerText(), /The balance, plan and rate limit below are from an earlier load \(read at .+\) and may be out of date/);
    assert.equal(await page.getByTestId('balance').innerText(), balance);
    await page.unroute('**/api/v1/account');
    await failed.getByRole('button', { name: 'Try again' }).click();
    await failed.waitFor({ state: 'detached' });
    // The button went with the focus: it is on the page's content, not on <body>.
    await until(() => page.evaluate<boolean>('document.activeElement?.id === "main"'), 'the focus on the content');

    // The usage summary: no figures kept (another period's would mislead), an error and Try again.
    await page.route((u) => u.pathname === '/api/v1/usage/summary', unavailable);
    await page.getByRole('button', { name: 'Last week' }).click();
    await failed.getByRole('button', { name: 'Try again' }).waitFor();
    assert.equal(await page.getByTestId('endpoint-totals').count(), 0);
    await page.unrouteAll();
    await failed.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('endpoint-totals').waitFor();

    // A list read again after a change (a new key) that fails: the rows kept are marked as earlier.
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByTestId('keys').locator('tbody tr').first().waitFor();
    await page.route((u) => u.pathname === '/api/v1/api-keys' && u.search !== '', unavailable);
    await page.getByLabel('Name of the new key (optional)').fill('made while the list fails');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key-secret').waitFor();
    await failed.getByText('The list of keys below is from an earlier load').waitFor();
    assert.ok((await page.getByTestId('keys').locator('tbody tr').count()) > 0, 'the earlier rows are kept');
    await page.unrouteAll();
    await failed.getByRole('button', { name: 'Try again' }).click();
    await page.getByTestId('keys').getByText('made while the list fails').waitFor();
    await failed.waitFor({ state: 'detached' });

    // Every other page: its failed load has a Try again that loads it.
    const pages: Array<[string, string, string]> = [
      ['Watchlist', '/social/v1/bulk-export/watchlist', 'watchlist'],
      ['Exports', '/social/v1/bulk-export/exports', 'exports'],
      ['Usage', '/api/v1/usage', 'ledger'],
      ['Crawl', '/social/v1/bulk-export/crawl-status', 'last-cycle'],
    ];
    for (const [name, path, testId] of pages) {
      await page.route((u) => u.pathname === path, unavailable);
      await page.getByRole('link', { name, exact: true }).click();
      await failed.getByRole('button', { name: 'Try again' }).waitFor();
      await page.unrouteAll();
      await failed.getByRole('button', { name: 'Try again' }).click();
      await failed.waitFor({ state: 'detached' });
      await page.getByTestId(testId).waitFor();
    }
    await page.close();
  });

  test('a mis-pasted key is called not valid, without a request, and the key field says it is invalid', async () => {
    const page = await browser.context.newPage();
    const asked: string[] = [];
    page.on('request', (r) => asked.push(r.url()));
    await page.goto(`${g.base}/dashboard`);
    const field = page.getByLabel('API key');
    const bad = [`“${g.account.apiKey}”`, `${g.account.apiKey.slice(0, 12)}\u200b${g.account.apiKey.slice(12)}`, `${g.account.apiKey}ł`];
    for (const key of bad) {
      asked.length = 0;
      await field.fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      await alert.getByText('This is not a valid API key').waitFor();
      assert.doesNotMatch(await alert.innerText(), /could not be reached/);
      assert.deepEqual(asked.filter((u) => u.includes('/api/')), [], `no request for ${JSON.stringify(key)}`);
      // The error belongs to the field: invalid, and described by the message.
      assert.equal(await field.getAttribute('aria-invalid'), 'true');
      const describedBy = (await field.getAttribute('aria-describedby'))!.split(' ');
      const alertId = await alert.getAttribute('id');
      assert.ok(alertId && describedBy.includes(alertId), `${describedBy} names the error`);
    }
    // A good key then signs in, and the field is no longer marked.
    await field.fill(g.account.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('balance').waitFor();
    await page.close();
  });
});
