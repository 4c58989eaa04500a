import type { FastifyReply, FastifyRequest } from 'fastify';
import { countText } from './count-text.js';
import type { JsonText } from './json-text.js';
import { writeOwnHead, type HeadEntry } from './unchecked-head.js';
import type { RateDecision } from '../ratelimit/rate-limiter.js';

// The headers of every answer to a keyed call (contract section 4): its request id, the rate limit's
// decision (once made), what it was charged and the balance after, and no-store (an answer is one
// account's; a new key's secret among them). Values as strings: Node writes string header values
// several µs faster per response than numbers.

const JSON_TYPE = 'application/json; charset=utf-8';
// The two headers whose values never change, as entries of Node's table (shared: Node only reads
// them). Not frozen: a frozen array's elements are of another kind than the other entries', and
// Node's reads of the entries went generic, 1,500 instructions a request.
const NO_STORE: HeadEntry = ['cache-control', 'no-store'];
const JSON_ENTRY: HeadEntry = ['content-type', JSON_TYPE];

/**
 * A keyed 2xx's head as Node's header table (unchecked-head.ts), in answer order. Fields set in one
 * order in the constructor: one shape, so Node's loop over them stays specialised. No prototype
 * chain to Object.prototype: Node's loop over its table takes inherited properties too (its own
 * tables have no prototype), and a property added to Object.prototype must not become a header.
 */
export class KeyedHead {
  [name: string]: HeadEntry;
  constructor(requestId: string, d: RateDecision, charged: number, balance: number, contentLength: number) {
    this['x-request-id'] = ['x-request-id', requestId];
    this['ratelimit-limit'] = ['ratelimit-limit', String(d.limit)];
    this['ratelimit-remaining'] = ['ratelimit-remaining', countText(d.remaining)];
    this['ratelimit-reset'] = ['ratelimit-reset', String(d.resetSeconds)];
    this['x-credits-charged'] = ['x-credits-charged', String(charged)];
    this['x-credits-remaining'] = ['x-credits-remaining', countText(balance)];
    this['cache-control'] = NO_STORE;
    this['content-type'] = JSON_ENTRY;
    this['content-length'] = ['content-length', String(contentLength)];
  }
}
Object.setPrototypeOf(KeyedHead.prototype, null);

/**
 * Those headers as name/value pairs in answer order: the rate limit's once decided, the credit
 * headers once the key is known (`charged`: what the call was charged; nothing for a failure).
 */
function keyedPairs(request: FastifyRequest, charged: number): string[] {
  const pairs = ['x-request-id', request.id];
  const d = request.rateLimit;
  if (d) pairs.push('ratelimit-limit', String(d.limit), 'ratelimit-remaining', countText(d.remaining), 'ratelimit-reset', String(d.resetSeconds));
  if (request.auth) pairs.push('x-credits-charged', String(charged), 'x-credits-remaining', countText(request.metering?.balanceAfter ?? request.auth.balance), 'cache-control', 'no-store');
  return pairs;
}

/** On an answer that Fastify sends (errors, replays): the headers above. */
export function keyedHeaders(request: FastifyRequest, reply: FastifyReply, charged = 0): void {
  const pairs = keyedPairs(request, charged);
  for (let i = 0; i < pairs.length; i += 2) reply.header(pairs[i]!, pairs[i + 1]);
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
  if (!d || !request.auth || status === 204 || status === 304 || status < 200) return sendKeyedAnswer(request, reply, body);
  if (strict) {
    // Headers on Node's response itself (Fastify's `connection: close` while closing) are kept by writeHead.
    const raw = reply.raw.getHeaderNames();
    const own = Object.keys(reply.getHeaders()).filter((k) => !raw.includes(k));
    if (own.length > 0) throw new Error(`a keyed handler set headers (${own.join(', ')}), which the direct answer would drop: set them in keyed-headers.ts`);
  }
  // The keyedPairs headers, then the body's, in the table Node writes the head from without checking
  // each header again (unchecked-head.ts).
  const m = request.metering!;
  const head = new KeyedHead(request.id, d, m.charged, m.balanceAfter ?? request.auth.balance, body.byteLength());
  reply.hijack();
  const res = reply.raw;
  try {
    writeOwnHead(res, status, head);
    res.end(body.body);
  } catch (err) {
    // Fastify no longer answers for a hijacked reply: the caller sees the connection end, not a hang.
    res.destroy(err as Error);
  }
}

/** The same answer through Fastify's send (the headers above, on the reply). */
export function sendKeyedAnswer(request: FastifyRequest, reply: FastifyReply, body: JsonText): void {
  keyedHeaders(request, reply, request.metering!.charged);
  reply.header('content-type', JSON_TYPE).send(body.body);
}
