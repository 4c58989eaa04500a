// The dashboard's state against what was asked last, in Chromium against a real gateway: a period's
// late answer, the Usage filter and the URL, an unknown page, and small wordings (a crawl's duration,
// a key name's limit and refusal).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumPresent, openDashboard, until, type Gateway, type OpenDashboard } from './world.js';

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';

describe('dashboard navigation and wording', { skip }, () => {
  let d: OpenDashboard;
  let g: Gateway;
  let page: Page;

  before(async () => {
    d = await openDashboard(async (g) => {
      // Charges of two endpoints, so the Usage filter offers them.
      assert.equal((await g.call(`/social/v1/tweets/${g.sample.tweetIds[0]}`)).status, 200);
      assert.equal((await g.call(`/social/v1/users/by/username/${g.sample.usernames[0]}`)).status, 200);
    });
    ({ g, page } = d);
  });
  after(async () => {
    await d?.close();
  });

  test("an answer for a period no longer pressed is dropped: a slow month's answer after Last day is pressed", async () => {
    await page.getByRole('status').filter({ hasText: 'by hour' }).waitFor();
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    await page.route(
      (u) => u.pathname === '/api/v1/usage/summary',
      async (r) => {
        if (new URL(r.request().url()).searchParams.get('granularity') === 'day') await held;
        await r.continue();
      },
    );
    const month = page.waitForResponse((r) => new URL(r.url()).searchParams.get('granularity') === 'day');
    await page.getByRole('button', { name: 'Last month' }).click();
    await page.getByRole('button', { name: 'Last day' }).click();
    await page.getByRole('status').filter({ hasText: 'by hour' }).waitFor();
    release();
    await (await month).finished();
    await page.waitForTimeout(300); // the page has had time to take it
    assert.equal(await page.getByRole('button', { name: 'Last day' }).getAttribute('aria-pressed'), 'true');
    assert.match(await page.locator('p.help[role="status"]').innerText(), /by hour/, "the day's figures, not the month's");
    await page.unrouteAll();
  });

  test('the Usage filter follows the URL: the nav link clears it, a new hash in the same tab sets it', async () => {
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    const ledger = page.getByTestId('ledger');
    const filter = page.getByLabel('Endpoint');
    await page.locator('#endpoint-filter option[value="getTweet"]').waitFor({ state: 'attached' });
    await filter.selectOption('getTweet');
    await ledger.getByText('(getTweet only)').waitFor();
    assert.match(page.url(), /#\/usage\?endpoint=getTweet$/);

    // (a) The nav's "Usage" (#/usage): the whole ledger again.
    await page.getByRole('link', { name: 'Usage', exact: true }).click();
    await until(async () => (await filter.inputValue()) === '', 'the filter cleared');
    await ledger.locator('caption').filter({ hasText: /^Ledger entries, newest first$/ }).waitFor();
    await page.locator('[role="region"][aria-label="Ledger"][aria-busy="false"]').waitFor();
    assert.equal(await ledger.locator('tbody tr').count(), 3, 'a grant and the two charges');

    // (b) Another endpoint in the URL, in the same tab.
    await page.evaluate(`location.hash = '#/usage?endpoint=getTweet'`);
    await ledger.getByText('(getTweet only)').waitFor();
    await page.evaluate(`location.hash = '#/usage?endpoint=getUserByUsername'`);
    await ledger.getByText('(getUserByUsername only)').waitFor();
    assert.equal(await filter.inputValue(), 'getUserByUsername');
    await page.locator('[role="region"][aria-label="Ledger"][aria-busy="false"]').waitFor();
    assert.deepEqual(await ledger.locator('tbody tr td:nth-child(3)').allInnerTexts(), ['getUserByUsername']);
  });

  test('an unknown page shows the Overview with a URL that says so', async () => {
    await page.goto(`${g.base}/dashboard#/nonsense`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    assert.equal(new URL(page.url()).hash, '#/');
    assert.equal(await page.getByRole('link', { name: 'Overview', exact: true }).getAttribute('aria-current'), 'page');
  });

  test('a cycle shorter than a minute reads "under a minute", not "0 min"', async () => {
    const at = new Date().toISOString();
    const cycle = { id: 'c1', startedAt: at, accountsTargeted: 3, accountsCompleted: 3, accountsFailed: 0, tweetsIngested: 12 };
    const body = { data: { currentCycle: null, lastCompletedCycle: { ...cycle, completedAt: at, durationMinutes: 0, tweetsUpdated: 4 }, schedule: { intervalHours: 6, nextExpectedAt: at } } };
    await page.route('**/social/v1/bulk-export/crawl-status', (r) => r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(body) }));
    await page.getByRole('link', { name: 'Crawl', exact: true }).click();
    const completed = page.getByTestId('last-cycle').locator('div', { hasText: 'Completed' });
    await completed.waitFor();
    assert.match(await completed.innerText(), /\(under a minute\)$/);
    await page.unrouteAll();
  });

  test("a key name longer than the field's limit is cut, saying so; a name the gateway refuses is explained in plain words", async () => {
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    const name = page.getByLabel('Name of the new key (optional)');
    await name.waitFor();
    const help = page.locator('#key-name-help');
    assert.equal(await help.innerText(), 'At most 100 characters.');
    assert.match((await name.getAttribute('aria-describedby')) ?? '', /key-name-help/);
    await name.fill('n'.repeat(10_000));
    assert.equal((await name.inputValue()).length, 100);
    await help.getByText('The name is at its limit of 100 characters: anything longer was cut off.').waitFor();

    // Only a zero-width space: the gateway refuses it ("body.name must not be blank…"), said plainly here.
    await name.fill('\u200b');
    await page.getByRole('button', { name: 'Create key' }).click();
    const alert = page.getByRole('alert');
    await alert.getByText("This name cannot be used: a key's name needs at least one visible character").waitFor();
    assert.doesNotMatch(await alert.innerText(), /body\.name/);
  });
});
