// The sign-in form: an API key, checked with the gateway before it is kept in this tab.
import { html } from 'htm/preact';
import type { VNode } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, keyProblem, session, type Single } from './api.js';
import type { Account } from './pages/overview.js';
import { ErrorNote } from './ui.js';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (account: Account) => void; notice: string | undefined }): VNode {
  const [key, setKey] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  // The one thing to do here: the focus starts on it (after signing out too, not on <body>).
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const fail = (e: unknown) => (setError(e), input.current?.focus());
  const submit = async (e: Event) => {
    e.preventDefault();
    const k = key.trim();
    if (!k) return fail(new Error('Paste an API key first.'));
    // Said here, without a request: the browser would refuse to send such a header at all.
    const bad = keyProblem(k);
    if (bad) return fail(new Error(bad));
    setBusy(true);
    try {
      const a = await api<Single<Account>>('/api/v1/account', { key: k });
      session.save(k);
      setKey('');
      onSignedIn(a.data);
    } catch (err) {
      fail(
        err instanceof ApiError && err.status === 401
          ? new Error('The gateway refused this key: it is unknown, malformed or revoked. Check that you copied the whole key.')
          : err,
      );
    } finally {
      setBusy(false);
    }
  };
  return html`<main id="main" class="signin">
    <h1>Social Data Gateway</h1>
    <h2>Sign in to your dashboard</h2>
    ${notice ? html`<p class="notice" role="status">${notice}</p>` : null}
    <form onSubmit=${submit} method="post" action="#" novalidate>
      <label for="api-key">API key</label>
      <input id="api-key" ref=${input} name="api-key" type="password" autocomplete="off" spellcheck="false" required
        value=${key} onInput=${(e: Event) => setKey((e.target as HTMLInputElement).value)}
        aria-invalid=${error ? 'true' : undefined} aria-describedby=${error ? 'key-error key-help' : 'key-help'} />
      <p id="key-help" class="help">The key stays in this browser tab only (sessionStorage) and goes to the gateway in the X-API-Key header, never in a URL. Closing the tab forgets it.</p>
      <${ErrorNote} error=${error} id="key-error" />
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button>
    </form>
    <p class="help">No key yet? An operator creates one with <code>sdg accounts create</code>. The API reference is at <a href="/docs">/docs</a>.</p>
  </main>`;
}
