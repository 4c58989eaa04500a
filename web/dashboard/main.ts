// The dashboard: sign in with an API key (kept in this tab's sessionStorage only), then one page per
// part of the account, picked by the URL's hash so that the server serves one document.
import { html } from 'htm/preact';
import { render, type VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, session, whenKeyRefused, type Single } from './api.js';
import { CrawlPage } from './pages/crawl.js';
import { ExportsPage } from './pages/exports.js';
import { KeysPage } from './pages/keys.js';
import { OverviewPage, type Account } from './pages/overview.js';
import { UsagePage } from './pages/usage.js';
import { WatchlistPage } from './pages/watchlist.js';
import { SignIn } from './signin.js';
import { ErrorNote } from './ui.js';

const PAGES = [
  { id: 'overview', title: 'Overview', view: OverviewPage },
  { id: 'keys', title: 'Keys', view: KeysPage },
  { id: 'watchlist', title: 'Watchlist', view: WatchlistPage },
  { id: 'crawl', title: 'Crawl', view: CrawlPage },
  { id: 'exports', title: 'Exports', view: ExportsPage },
  { id: 'usage', title: 'Usage', view: UsagePage },
] as const;
type PageId = (typeof PAGES)[number]['id'];

function pageFromHash(): PageId {
  // The page is the hash's path; what follows a '?' is the page's own state (the usage filter).
  const id = location.hash.replace(/^#\/?/, '').split('?')[0];
  const page = PAGES.find((p) => p.id === id)?.id;
  if (page) return page;
  // No such page: the Overview, and a URL that says so (not one that names a page that is not shown).
  if (id) history.replaceState(null, '', '#/');
  return 'overview';
}

function App(): VNode {
  const [account, setAccountOnly] = useState<Account>();
  // When the account shown was read, so a page can say so when a later read fails.
  const [accountAt, setAccountAt] = useState(new Date());
  const setAccount = (a: Account | undefined) => (setAccountOnly(a), setAccountAt(new Date()));
  const [checking, setChecking] = useState(session.key() !== null);
  const [notice, setNotice] = useState<string>();
  const [page, setPage] = useState<PageId>(pageFromHash());
  // The key kept in this tab could not be checked (the gateway down, a 503): it is kept, and the
  // tab says so with a retry, rather than showing a sign-in form as if it had signed out.
  const [unchecked, setUnchecked] = useState<unknown>();
  const check = () => {
    setChecking(true);
    setUnchecked(undefined);
    api<Single<Account>>('/api/v1/account').then(
      (a) => (setAccount(a.data), setChecking(false)),
      (err: unknown) => {
        setChecking(false);
        // A refused key has signed the tab out already (whenKeyRefused).
        if (!(err instanceof ApiError && err.status === 401)) setUnchecked(err);
      },
    );
  };

  useEffect(() => {
    const onHash = () => setPage(pageFromHash());
    addEventListener('hashchange', onHash);
    whenKeyRefused((e) => {
      session.clear();
      setAccount(undefined);
      setNotice(`You were signed out: ${e.message}`);
    });
    if (session.key()) check();
    return () => removeEventListener('hashchange', onHash);
  }, []);

  // A new page moves the focus to its content, so a keyboard or screen-reader user starts there.
  const first = useRef(true);
  useEffect(() => {
    if (first.current) return void (first.current = false);
    document.getElementById('main')?.focus();
  }, [page]);

  useEffect(() => {
    const title = PAGES.find((p) => p.id === page)?.title ?? '';
    document.title = account ? `${title} · Dashboard · Social Data Gateway` : 'Sign in · Dashboard · Social Data Gateway';
  }, [page, account]);

  if (checking) return html`<p class="loading" role="status">Checking your key…</p>`;
  if (!account && unchecked && session.key()) {
    return html`<main id="main" class="signin">
      <h1>Social Data Gateway</h1>
      <p role="alert">Your key could not be checked: the gateway did not answer as it should. You are still signed in in this tab.</p>
      <${ErrorNote} error=${unchecked} />
      <div class="row">
        <button type="button" onClick=${check}>Try again</button>
        <button type="button" class="link" onClick=${() => (session.clear(), setUnchecked(undefined), setNotice('Signed out. The key is no longer kept in this tab.'))}>Sign out</button>
      </div>
    </main>`;
  }
  if (!account) return html`<${SignIn} notice=${notice} onSignedIn=${(a: Account) => (setNotice(undefined), setAccount(a), requestAnimationFrame(() => document.getElementById('main')?.focus()))} />`;

  const signOut = () => {
    session.clear();
    setAccount(undefined);
    setNotice('Signed out. The key is no longer kept in this tab.');
  };
  const View = PAGES.find((p) => p.id === page)!.view;
  return html`<a class="skip" href="#main" onClick=${(e: Event) => (e.preventDefault(), document.getElementById('main')?.focus())}>Skip to content</a>
    <header class="top">
      <p class="brand">Social Data Gateway</p>
      <nav aria-label="Dashboard">
        <ul>
          ${PAGES.map((p) => html`<li><a href=${`#/${p.id}`} aria-current=${p.id === page ? 'page' : undefined}>${p.title}</a></li>`)}
        </ul>
      </nav>
      <p class="who"><span class="account-name">${account.name}</span>
        <button type="button" class="link" onClick=${signOut}>Sign out</button></p>
    </header>
    <main id="main" tabindex="-1">
      <${View} account=${account} accountAt=${accountAt} onAccount=${setAccount} />
    </main>`;
}

const root = document.getElementById('app')!;
root.textContent = ''; // the static "Loading…" line
render(html`<${App} />`, root);
