// GET / : a small public page that says what this service is and where to go next. Plain HTML with
// no script and no styles, so its Content-Security-Policy can allow nothing at all.
import type { App } from '../../http/types.js';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Social Data Gateway</title>
</head>
<body>
<main>
<h1>Social Data Gateway</h1>
<p>A credit-metered HTTP/JSON API for social-post data: profiles, tweets, retweeters, user timelines
and communities read from the configured data source, bulk exports of the accounts on a watchlist,
and the keys, credits and usage of your account. Every API call carries an <code>X-API-Key</code> header.</p>
<ul>
<li><a href="/docs">API reference</a> (/docs)</li>
<li><a href="/openapi.json">OpenAPI document</a> (/openapi.json)</li>
<li><a href="/dashboard">Dashboard</a> (/dashboard): your balance, keys and usage</li>
</ul>
</main>
</body>
</html>
`;

export const LANDING_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'public, max-age=300',
};

export function registerLanding(app: App): void {
  app.get('/', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => reply.headers(LANDING_HEADERS).send(PAGE));
}
