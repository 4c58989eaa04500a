// The dashboard's tables on a phone (390 px) and with very long text, in Chromium against a real
// gateway: every row's action and figures within the screen, notes of 10,000 characters wrapped, and
// a table region a tab stop only while it scrolls.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumPresent, openDashboard, until, type OpenDashboard } from './world.js';

const skip = chromiumPresent() ? false : 'Chromium is not installed at /usr/bin/chromium (Debian: apt-get install -y chromium)';
const KEY_NAME = 'Release pipeline on the staging cluster';
const LONG_NOTE = 'N'.repeat(10_000);

/**
 * The elements matching `selector` that are not wholly visible: outside the screen, or outside their
 * table's region (clipped or scrolled out of sight). Also the count found, and whether anything scrolls sideways.
 */
async function outOfSight(page: Page, selector: string): Promise<{ found: number; hidden: string[]; pageWidth: number; regionScrolls: boolean }> {
  return page.evaluate(`(() => {
    const els = [...document.querySelectorAll(${JSON.stringify(selector)})];
    const hidden = [];
    for (const el of els) {
      const r = el.getBoundingClientRect();
      const w = el.closest('.table-wrap').getBoundingClientRect();
      if (r.left < Math.max(0, w.left) - 0.5 || r.right > Math.min(innerWidth, w.right) + 0.5 || r.width === 0) hidden.push(el.textContent.trim().slice(0, 30) + ' [' + Math.round(r.left) + '..' + Math.round(r.right) + ']');
    }
    const regions = [...document.querySelectorAll('.table-wrap')];
    return { found: els.length, hidden, pageWidth: document.documentElement.scrollWidth, regionScrolls: regions.some((w) => w.scrollWidth > w.clientWidth + 1) };
  })()`);
}

describe('dashboard on a phone and with long text', { skip }, () => {
  let d: OpenDashboard;
  let page: Page;

  before(async () => {
    d = await openDashboard(async (g) => {
      assert.equal((await g.call('/api/v1/api-keys', { method: 'POST', body: { name: KEY_NAME } })).status, 201);
      for (const t of g.sample.tweetIds.slice(0, 2)) assert.equal((await g.call(`/social/v1/tweets/${t}`)).status, 200);
      const db = g.h.deps.store.db;
      const at = new Date().toISOString();
      const grant = { account_id: g.account.accountId, kind: 'grant' as const, balance_after: 0, request_id: null, key_id: null, endpoint: null, created_at: at };
      await db.insertInto('ledger_entries').values([{ ...grant, amount: 1, note: LONG_NOTE }, { ...grant, amount: 777, note: '' }]).execute();
      await db.insertInto('watchlist_entries').values({ account_id: g.account.accountId, social_user_id: '1849284729384756102', username: 'a_rather_long_username_for_a_phone', added_at: at }).execute();
      // A completed export, so its row has a Download button.
      const end = new Date();
      end.setMinutes(0, 0, 0);
      const made = await g.call('/social/v1/bulk-export/exports/generate', { method: 'POST', body: { startDate: new Date(end.getTime() - 3_600_000).toISOString(), endDate: end.toISOString() } });
      const id = (made.body as { data: { id: string } }).data.id;
      await until(async () => ((await g.call(`/social/v1/bulk-export/exports/${id}`)).body as { data: { status: string } }).data.status === 'completed', 'the export completed', 30_000);
    }, { width: 390, height: 844 });
    ({ page } = d);
  });
  after(async () => {
    await d?.close();
  });

  const go = async (name: string, testId: string) => {
    await page.getByRole('link', { name, exact: true }).click();
    await page.getByTestId(testId).locator('tbody tr').first().waitFor();
  };

  test("at 390 px each row's action button and figures are on the screen, and nothing scrolls sideways", async () => {
    const cases: Array<[string, string, string, number]> = [
      // page, table, what must be seen, how many at least
      ['Keys', 'keys', '[data-testid="keys"] tbody button', 2],
      ['Watchlist', 'watchlist', '[data-testid="watchlist"] tbody button', 1],
      ['Exports', 'exports', '[data-testid="exports"] tbody td:nth-child(4), [data-testid="exports"] tbody td:nth-child(5), [data-testid="exports"] tbody button', 3],
      ['Usage', 'ledger', '[data-testid="ledger"] tbody td:nth-child(4), [data-testid="ledger"] tbody td:nth-child(5)', 10],
    ];
    for (const [name, testId, selector, least] of cases) {
      await go(name, testId);
      const seen = await outOfSight(page, selector);
      assert.ok(seen.found >= least, `${name}: ${seen.found} found`);
      assert.deepEqual(seen.hidden, [], `${name}: out of sight at 390 px`);
      assert.ok(seen.pageWidth <= 390, `${name}: the page is ${seen.pageWidth}px wide`);
      assert.equal(seen.regionScrolls, false, `${name}: a table scrolls sideways`);
    }
    // A key's name has the width of the screen, not a narrow column (it wrapped at about 4 characters a line).
    await go('Keys', 'keys');
    const lines = await page.evaluate<number>(`(() => {
      const cell = [...document.querySelectorAll('[data-testid="keys"] td.key-name')].find((td) => td.textContent.includes(${JSON.stringify(KEY_NAME)}));
      const range = document.createRange();
      range.selectNodeContents(cell.firstChild);
      return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
    })()`);
    assert.ok(lines <= 2, `a ${KEY_NAME.length}-character name takes ${lines} lines`);
  });

  test('a note of 10,000 characters wraps inside the ledger at both widths; an empty note reads "—"', async () => {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 844 });
      await go('Usage', 'ledger');
      const region = page.locator('.table-wrap[aria-label="Ledger"]');
      await page.locator('.table-wrap[aria-label="Ledger"][aria-busy="false"]').waitFor();
      const size = await region.evaluate((el) => {
        const e = el as unknown as { scrollWidth: number; clientWidth: number };
        return { scroll: e.scrollWidth, client: e.clientWidth };
      });
      assert.ok(size.scroll <= size.client + 1, `at ${width}px the ledger is ${size.scroll}px wide in ${size.client}px`);
      const rows = await page.getByTestId('ledger').locator('tbody tr').evaluateAll((trs) =>
        trs.map((tr) => Array.from((tr as unknown as { children: ArrayLike<{ textContent: string }> }).children).map((c) => c.textContent.trim())),
      );
      assert.ok(rows.some((r) => r[2] === LONG_NOTE), 'the long note is shown whole');
      assert.equal(rows.find((r) => r[3] === '+777')?.[2], '—');
    }
  });

  test('a table region is a tab stop only while its table is wider than it', async () => {
    await page.setViewportSize({ width: 1280, height: 844 });
    await go('Keys', 'keys');
    const region = page.locator('.table-wrap[aria-label="API keys"]');
    assert.equal(await region.getAttribute('tabindex'), null);
    await page.getByTestId('keys').evaluate((t) => ((t as unknown as { style: { minWidth: string } }).style.minWidth = '3000px'));
    await until(async () => (await region.getAttribute('tabindex')) === '0', 'the region became a tab stop');
    await page.getByTestId('keys').evaluate((t) => ((t as unknown as { style: { minWidth: string } }).style.minWidth = ''));
    await until(async () => (await region.getAttribute('tabindex')) === null, 'the region no longer a tab stop');
    // At a phone's width no region scrolls, so none is a stop.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, testId] of [['Keys', 'keys'], ['Watchlist', 'watchlist'], ['Exports', 'exports'], ['Usage', 'ledger']] as const) {
      await go(name, testId);
      await page.waitForTimeout(100);
      assert.equal(await page.locator('.table-wrap[tabindex]').count(), 0, name);
    }
  });
});
