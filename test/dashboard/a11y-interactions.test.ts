// What a keyboard or screen-reader user meets after acting, in Chromium against a real gateway: where
// the focus goes after a removal and what is said, an emptied last page, the revoke question's
// description, and the charts' legend as toggle buttons.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumPresent, openDashboard, until, type OpenDashboard } from './world.js';

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';

/** The accessible name of the focused element (its aria-label, else its text), or "<body>". */
const focused = (page: Page) => page.evaluate<string>(`(() => {
  const el = document.activeElement;
  return !el || el === document.body ? '<body>' : el.getAttribute('aria-label') ?? el.textContent.trim();
})()`);

describe('dashboard focus and announcements', { skip }, () => {
  let d: OpenDashboard;
  let page: Page;

  before(async () => {
    d = await openDashboard(async (g) => {
      for (const t of g.sample.tweetIds.slice(0, 3)) assert.equal((await g.call(`/social/v1/tweets/${t}`)).status, 200);
      assert.equal((await g.call(`/social/v1/users/by/username/${g.sample.usernames[0]}`)).status, 200);
      // 21 watched accounts: a page of 20 and a second page of one.
      const at = Date.now();
      await g.h.deps.store.db
        .insertInto('watchlist_entries')
        .values(Array.from({ length: 21 }, (_, i) => ({ account_id: g.account.accountId, social_user_id: String(9_000_000_000 + i), username: `watched_${String(i).padStart(2, '0')}`, added_at: new Date(at - i * 60_000).toISOString() })))
        .execute();
    });
    ({ page } = d);
  });
  after(async () => {
    await d?.close();
  });

  test("removing a watched account says so and leaves the focus in the list; removing a last page's last row goes back a page", async () => {
    await page.getByRole('link', { name: 'Watchlist', exact: true }).click();
    const rows = page.getByTestId('watchlist').locator('tbody tr');
    await until(async () => (await rows.count()) === 20, 'the first page');
    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('Page 2').waitFor();
    await until(async () => (await rows.count()) === 1, 'the second page');
    const last = (await rows.locator('td.username').innerText()).trim();

    // By keyboard: the focus on its Remove button, Enter.
    await page.getByRole('button', { name: `Stop watching ${last}` }).focus();
    await page.keyboard.press('Enter');
    const status = page.locator('p[role="status"]', { hasText: `Stopped watching ${last}.` });
    await status.waitFor({ timeout: 30_000 });
    // Page 2 is empty now: page 1 is shown, not an empty "Page 2".
    await page.getByText('Page 1').waitFor();
    await until(async () => (await rows.count()) === 20, 'back on the first page');
    // The last row, the nearest to where it was.
    const lastOfFirst = `Stop watching ${(await rows.last().locator('td.username').innerText()).trim()}`;
    await until(async () => (await focused(page)) === lastOfFirst, `the focus on ${lastOfFirst} (it is on ${await focused(page)})`);

    // A row in the middle: the focus goes to the row that takes its place.
    const third = (await rows.nth(2).locator('td.username').innerText()).trim();
    const fourth = (await rows.nth(3).locator('td.username').innerText()).trim();
    await page.getByRole('button', { name: `Stop watching ${third}` }).focus();
    await page.keyboard.press('Enter');
    await page.locator('p[role="status"]', { hasText: `Stopped watching ${third}.` }).waitFor({ timeout: 30_000 });
    await until(async () => (await focused(page)) === `Stop watching ${fourth}`, `the focus on ${fourth}'s Remove button (it is on ${await focused(page)})`);
  });

  test("the revoke question's warning describes its group and both answers", async () => {
    await page.getByRole('link', { name: 'Keys', exact: true }).click();
    await page.getByTestId('keys').locator('tbody tr').first().waitFor();
    await page.getByRole('button', { name: /^Revoke/ }).first().click();
    const cancel = page.getByRole('button', { name: 'Cancel' });
    await cancel.waitFor();
    for (const el of [page.getByRole('group', { name: /^Confirm revoking/ }), cancel, page.getByRole('button', { name: 'Yes, revoke' })]) {
      const ids = (await el.getAttribute('aria-describedby')) ?? '';
      assert.ok(ids, 'aria-describedby is set');
      const description = await page.evaluate<string>(`${JSON.stringify(ids.split(' '))}.map((id) => document.getElementById(id)?.textContent ?? '').join(' ')`);
      assert.match(description, /Calls with it stop at once/);
    }
    await page.keyboard.press('Escape');
  });

  test('the legend toggles each line by keyboard, with its pressed state exposed', async () => {
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    const charts = page.getByTestId('charts');
    await charts.locator('canvas').nth(1).waitFor();
    const toggle = page.getByRole('group', { name: 'Calls: lines shown' }).getByRole('button', { name: 'getTweet' });
    assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
    // Pixels of getTweet's colour (#1f5fa8) on the Calls chart.
    const inColour = () =>
      charts.locator('canvas').first().evaluate((c) => {
        const canvas = c as unknown as { width: number; height: number; getContext(k: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> } } };
        const px = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
        let n = 0;
        for (let i = 0; i < px.length; i += 4) if (Math.abs(px[i]! - 0x1f) < 8 && Math.abs(px[i + 1]! - 0x5f) < 8 && Math.abs(px[i + 2]! - 0xa8) < 8 && px[i + 3]! > 200) n++;
        return n;
      });
    assert.ok((await inColour()) > 50, 'the line is drawn');
    // Reached with Tab like any button (it is one), and pressed with the space bar.
    await page.getByRole('button', { name: 'Last month' }).focus();
    let steps = 0;
    while ((await focused(page)) !== 'getTweet' && steps++ < 10) await page.keyboard.press('Tab');
    assert.equal(await focused(page), 'getTweet', 'reached by Tab');
    await page.keyboard.press('Space');
    await until(async () => (await toggle.getAttribute('aria-pressed')) === 'false', 'pressed off');
    await until(async () => (await inColour()) === 0, 'the line is gone');
    await page.keyboard.press('Enter');
    await until(async () => (await toggle.getAttribute('aria-pressed')) === 'true', 'pressed on');
    await until(async () => (await inColour()) > 50, 'the line is back');
  });
});
