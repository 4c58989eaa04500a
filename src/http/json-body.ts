// The JSON body parser: Fastify's own (prototype and constructor poisoning refused, its defaults),
// and strings that no store keeps as sent refused with a 400 naming the field: a NUL (U+0000), which
// Postgres refuses in text (`{"name":"\u0000"}` for a new API key answered 500 there, and was
// stored on SQLite), and a lone surrogate (`\ud800`), which both stores would have replaced with
// U+FFFD. The URL's %00 is refused the same way (app.ts). Bytes that are not UTF-8 are refused too.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';
import { encodedBodyError } from './error-handler.js';

type Flaw = 'holds a NUL character' | 'is not well-formed Unicode (a lone surrogate)';

/** In a `u` regex a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function flawOf(text: string): Flaw | undefined {
  if (text.includes('\0')) return 'holds a NUL character';
  if (LONE_SURROGATE.test(text)) return 'is not well-formed Unicode (a lone surrogate)';
  return undefined;
}

/**
 * The first string (or object key) in `value` that no store keeps as sent: where, and why. Walked
 * with a stack of its own, not recursively: a body nested 10,000 deep overflowed the call stack, and
 * the RangeError was reported as a refused __proto__ key.
 */
function flawAt(value: unknown, path: string): { at: string; flaw: Flaw } | undefined {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      const flaw = flawOf(v);
      if (flaw) return { at, flaw };
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    // Pushed last first, so that the first flaw in the body's order is the one named.
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${at}.${i}`]);
      continue;
    }
    const entries = Object.entries(v);
    for (const [k] of entries) {
      const flaw = flawOf(k);
      if (flaw) return { at, flaw };
    }
    for (let i = entries.length - 1; i >= 0; i--) stack.push([entries[i]![1], `${at}.${entries[i]![0]}`]);
  }
  return undefined;
}

/** The charset parameter of a Content-Type, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*("[^"]*"|[^;\s]*)/i;

/**
 * JSON writes either only as an escape (a raw NUL is not allowed in a string, and UTF-8 cannot
 * carry a lone surrogate), so a body without `\u0000` or `\ud800`-`\udfff` skips the walk.
 */
const SUSPECT = /\\u(?:0000|d[89a-f])/i;

export function registerJsonBodyParser(app: FastifyInstance): void {
  // As Fastify's own defaults: a body with __proto__ or constructor.prototype is refused.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer; // parseAs: 'buffer'
    // A charset other than UTF-8 named: the body would be read as UTF-8 all the same, so a UTF-16 or
    // Latin-1 body would be taken as other characters than were sent. Refused as a media type not
    // served (JSON is UTF-8, RFC 8259 section 8.1).
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]?.replace(/^"|"$/g, '').toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      return done(new AppError('unsupported_media_type', `The body must be JSON in UTF-8; charset=${charset} is not accepted.`), undefined);
    }
    // JSON is UTF-8 (RFC 8259): bytes that are not would be decoded with U+FFFD in their place and
    // kept so, changed from what was sent, where a NUL or a lone surrogate is refused.
    if (!isUtf8(bytes)) {
      // Compressed bytes are not UTF-8 either: what to say is that they are not decoded.
      const encoding = request.headers['content-encoding'];
      if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return done(encodedBodyError(), undefined);
      return done(new AppError('invalid_request', 'The body is not valid UTF-8.', { fields: [{ field: 'body', message: 'is not valid UTF-8' }] }), undefined);
    }
    const text = bytes.toString('utf8');
    parse(request, text, (err, value) => {
      if (err) {
        // Fastify's parser says "invalid JSON" for both; JSON that parses was refused for its keys.
        if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && parsesAsJson(text)) {
          const message = 'holds a __proto__ or constructor.prototype key, which is refused';
          return done(new AppError('invalid_request', `The body ${message}.`, { fields: [{ field: 'body', message }] }), undefined);
        }
        return done(err);
      }
      const found = SUSPECT.test(text) ? flawAt(value, 'body') : undefined;
      if (found) return done(new AppError('invalid_request', `${found.at} ${found.flaw}.`, { fields: [{ field: found.at, message: found.flaw }] }), undefined);
      done(null, value);
    });
  });
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
