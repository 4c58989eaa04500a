// /dashboard: the account holder's pages, served from the files `npm run build` bundles (no CDN, so an
// offline host serves them too). Public: the page signs in with a key it sends in X-API-Key itself.
// The Content-Security-Policy allows scripts and styles from this origin only (no inline script),
// calls to this origin only, and no framing; the key never appears in a URL, so no log sees it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { defaultDashboardDir, loadAssets, type Asset } from '../dashboard/assets.js';
import { AppError } from '../errors/app-error.js';
import type { App } from '../http/types.js';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  // Revalidated on every load (a 304 when unchanged), so a new build shows at once.
  'cache-control': 'no-cache',
};

export function registerDashboard(app: App, dir = defaultDashboardDir()): void {
  // Read on first use rather than at start-up, so a build made after the server started is found.
  let assets: Map<string, Asset> | undefined;
  const asset = (path: string): Asset => {
    assets ??= loadAssets(dir);
    if (!assets) throw new AppError('not_found', 'The dashboard has not been built on this server: run `npm run build`, then restart.');
    const a = assets.get(path);
    if (!a) throw new AppError('not_found', `No dashboard file ${path}.`);
    return a;
  };
  const send = (request: FastifyRequest, reply: FastifyReply, a: Asset) => {
    reply.headers(HEADERS).header('etag', a.etag);
    if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
    return reply.header('content-type', a.contentType).send(a.body);
  };
  const opts = { config: { public: true }, schema: { hide: true } } as const;
  app.get('/dashboard', opts, async (request, reply) => send(request, reply, asset('index.html')));
  app.get<{ Params: { file: string } }>('/dashboard/assets/:file', opts, async (request, reply) => {
    // Only names the build made: no path ever reaches the file system.
    return send(request, reply, asset(`assets/${request.params.file}`));
  });
}
