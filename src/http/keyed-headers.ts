import type { FastifyReply, FastifyRequest } from 'fastify';
import { countText } from './count-text.js';
import type { JsonText } from './json-text.js';

// The headers of every answer to a keyed call (contract section 4): its request id, the rate limit's
// decision (once made), what it was charged and the balance after, and no-store (an answer is one
// account's; a new key's secret among them). Values as strings: Node writes string header values
// several µs faster per response than numbers.

const JSON_TYPE = 'application/json; charset=utf-8';

/** On an answer that Fastify sends (errors, replays): the rate limit's headers and the credit headers. */
export function keyedHeaders(request: FastifyRequest, reply: FastifyReply, charged = 0): void {
  const d = request.rateLimit;
  if (d) reply.headers({ 'ratelimit-limit': String(d.limit), 'ratelimit-remaining': countText(d.remaining), 'ratelimit-reset': String(d.resetSeconds) });
  if (!request.auth) return;
  reply.headers({ 'x-credits-charged': String(charged), 'x-credits-remaining': countText(request.metering?.balanceAfter ?? request.auth.balance), 'cache-control': 'no-store' });
}

/**
 * A keyed call's 2xx, written to Node's response at once (Fastify's reply is hijacked): the same
 * status, headers and body Fastify's send would write, without its per-header bookkeeping (each
 * header lower-cased and stored, then copied to Node, which checks each again), a quarter of the
 * work that the gateway adds to a bare Fastify answer (docs/benchmarks.md, 2026-12-07). Only where
 * nothing else puts headers on the reply: the metering wrapper falls back to Fastify's send when
 * CORS is on (its hook adds the allowed origin), and no keyed handler sets a header (in tests, the
 * wrapper checks: `strict`). A status without a body (204, 304) goes through Fastify's send too.
 */
export function writeKeyedAnswer(request: FastifyRequest, reply: FastifyReply, body: JsonText, strict = false): void {
  const d = request.rateLimit;
  const status = reply.statusCode;
  // No decision (an app put together without the key check, as some tests do): Fastify's send.
  if (!d || status === 204 || status === 304 || status < 200) return sendKeyedAnswer(request, reply, body);
  if (strict) {
    // Headers on Node's response itself (Fastify's `connection: close` while closing) are kept by writeHead.
    const raw = reply.raw.getHeaderNames();
    const own = Object.keys(reply.getHeaders()).filter((k) => !raw.includes(k));
    if (own.length > 0) throw new Error(`a keyed handler set headers (${own.join(', ')}), which the direct answer would drop: set them in keyed-headers.ts`);
  }
  const m = request.metering!;
  reply.hijack();
  const res = reply.raw;
  try {
    // A flat array: Node takes the pairs in order, with no object to build and read back.
    res.writeHead(status, [
      'x-request-id',
      request.id,
      'ratelimit-limit',
      String(d.limit),
      'ratelimit-remaining',
      countText(d.remaining),
      'ratelimit-reset',
      String(d.resetSeconds),
      'x-credits-charged',
      String(m.charged),
      'x-credits-remaining',
      countText(m.balanceAfter ?? request.auth!.balance),
      'content-type',
      JSON_TYPE,
      'cache-control',
      'no-store',
      'content-length',
      String(body.byteLength()),
    ]);
    res.end(body.body);
  } catch (err) {
    // Fastify no longer answers for a hijacked reply: the caller sees the connection end, not a hang.
    res.destroy(err as Error);
  }
}

/** The same answer through Fastify's send (the headers above, on the reply). */
export function sendKeyedAnswer(request: FastifyRequest, reply: FastifyReply, body: JsonText): void {
  reply.header('x-request-id', request.id);
  keyedHeaders(request, reply, request.metering!.charged);
  reply.header('content-type', JSON_TYPE).send(body.body);
}
