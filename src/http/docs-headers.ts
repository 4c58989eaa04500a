// Security headers of the HTML documentation (/docs): swagger-ui's own CSP (hashes of its inline
// code, made by @fastify/swagger-ui) with framing forbidden, plus nosniff and no referrer.
import type { FastifyReply, FastifyRequest } from 'fastify';

// The one <style> swagger-ui's script adds to the page at run time (of @fastify/swagger-ui's bundled
// swagger-ui, as pinned in package-lock.json), which the CSP blocked: a console error on every visit.
// test/security/docs-browser.test.ts loads /docs in Chromium and fails on any CSP report, so a new
// swagger-ui whose style differs is noticed.
const SWAGGER_UI_INJECTED_STYLE = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

export function docsCsp(header: string): string {
  return header
    .replace(/frame-ancestors [^;]*;/, "frame-ancestors 'none';")
    .replace(/style-src ([^;]*);/, (_m, sources: string) => `style-src ${sources.trim()} ${SWAGGER_UI_INJECTED_STYLE};`)
    // Plain-HTTP deployments (a local gateway) would otherwise lose every script and style.
    .replace(/\s*upgrade-insecure-requests;?/, '');
}

export function docsHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.headers({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' });
  done();
}
