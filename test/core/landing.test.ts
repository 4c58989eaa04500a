// GET / : the public landing page. Its headers (a CSP that allows nothing, nosniff, no referrer),
// its content and links, its absence from the OpenAPI document; then in a real browser, when one is
// installed, that it renders with no policy violation and its links lead somewhere.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { backends } from '../helpers/backends.js';
import { json, startHarness, type Harness } from '../helpers/harness.js';

const BROWSER = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find((p) => p && existsSync(p));

for (const backend of backends()) {
  describe(`landing page (${backend})`, () => {
    let h: Harness;
    before(async () => {
      h = await startHarness(backend);
    });
    after(() => h.close());

    test('public HTML naming the service, linking /docs, /openapi.json and /dashboard, with security headers', async () => {
      for (const headers of [{}, { 'x-api-key': 'sdg_not_a_key' }]) {
        const r = await h.app.inject({ url: '/', headers });
        assert.equal(r.statusCode, 200, r.body);
        assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
        const csp = String(r.headers['content-security-policy']);
        assert.match(csp, /(^|; )default-src 'none'(;|$)/);
        assert.match(csp, /(^|; )frame-ancestors 'none'(;|$)/);
        assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|script-src/);
        assert.equal(r.headers['x-content-type-options'], 'nosniff');
        assert.equal(r.headers['referrer-policy'], 'no-referrer');
        assert.ok(r.headers['x-request-id']);
        assert.equal(r.headers['x-credits-charged'], undefined, 'public: nothing metered');
        assert.match(r.body, /^<!doctype html>/i);
        assert.match(r.body, /<title>Social Data Gateway<\/title>/);
        assert.match(r.body, /<h1>Social Data Gateway<\/h1>/);
        for (const href of ['/docs', '/openapi.json', '/dashboard']) assert.ok(r.body.includes(`href="${href}"`), href);
        // Nothing the policy would have to allow: no script, no inline style.
        assert.doesNotMatch(r.body, /<script|<style|\sstyle=|\son[a-z]+=/i);
      }
    });

    test('HEAD answers the same headers; other methods are not routes', async () => {
      const head = await h.app.inject({ method: 'HEAD', url: '/' });
      assert.equal(head.statusCode, 200);
      assert.equal(head.headers['content-security-policy'], (await h.app.inject({ url: '/' })).headers['content-security-policy']);
      const post = await h.app.inject({ method: 'POST', url: '/', payload: {} });
      assert.equal(post.statusCode, 404);
      assert.equal(json<{ error: { code: string } }>(post).error.code, 'not_found');
    });

    test('not in the OpenAPI document; the documents it links answer', async () => {
      const doc = json<{ paths: Record<string, unknown> }>(await h.app.inject({ url: '/openapi.json' }));
      assert.equal(doc.paths['/'], undefined);
      assert.ok(Object.keys(doc.paths).length > 10);
      const docs = await h.app.inject({ url: '/docs' });
      assert.ok(docs.statusCode === 200 || docs.statusCode === 302, `/docs answered ${docs.statusCode}`);
    });
  });
}

describe('landing page in a browser', { skip: BROWSER ? false : 'no Chromium installed (set CHROMIUM_PATH)' }, () => {
  let h: Harness;
  let base: string;
  before(async () => {
    h = await startHarness('sqlite');
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  });
  after(() => h.close());

  test('renders under its policy with no violation; the reference and the OpenAPI links work', async () => {
    const browser = await chromium.launch({ executablePath: BROWSER!, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(m.text());
      });
      page.on('pageerror', (e) => problems.push(e.message));
      const res = await page.goto(`${base}/`);
      assert.equal(res?.status(), 200);
      assert.equal(await page.title(), 'Social Data Gateway');
      assert.equal(await page.locator('h1').innerText(), 'Social Data Gateway');
      const hrefs = await page.locator('a').evaluateAll((as) => as.map((x) => x.getAttribute('href')));
      assert.deepEqual(hrefs, ['/docs', '/openapi.json', '/dashboard']);
      assert.deepEqual(problems, []);
      const [openapi] = await Promise.all([page.waitForResponse(`${base}/openapi.json`), page.locator('a[href="/openapi.json"]').click()]);
      assert.equal(openapi.status(), 200);
      await page.goto(`${base}/`);
      await page.locator('a[href="/docs"]').click();
      await page.waitForURL(/\/docs/);
      assert.match(await page.title(), /swagger|docs|api/i);
    } finally {
      await browser.close();
    }
  });
});
