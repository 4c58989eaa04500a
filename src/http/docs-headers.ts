// Security headers of the HTML documentation (/docs): swagger-ui's own CSP (hashes of its inline
// code, made by @fastify/swagger-ui) with framing forbidden, plus nosniff and no referrer.
import type { FastifyReply, FastifyRequest } from 'fastify';

export function docsCsp(header: string): string {
  return header
    .replace(/frame-ancestors [^;]*;/, "frame-ancestors 'none';")
    // Plain-HTTP deployments (a local gateway) would otherwise lose every script and style.
    .replace(/\s*upgrade-insecure-requests;?/, '');
}

export function docsHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.headers({ 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY' });
  done();
}
