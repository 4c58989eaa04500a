// The JSON body parser: Fastify's own (prototype and constructor poisoning refused, its defaults),
// and strings that no store keeps as sent refused with a 400 naming the field: a NUL (U+0000), which
// Postgres refuses in text (`{"name":"\u0000"}` for a new API key answered 500 there, and was
// stored on SQLite), and a lone surrogate (`\ud800`), which both stores would have replaced with
// U+FFFD. The URL's %00 is refused the same way (app.ts).
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';

type Flaw = 'holds a NUL character' | 'is not well-formed Unicode (a lone surrogate)';

/** In a `u` regex a surrogate pair is one code point, so only a lone surrogate matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

function flawOf(text: string): Flaw | undefined {
  if (text.includes('\0')) return 'holds a NUL character';
  if (LONE_SURROGATE.test(text)) return 'is not well-formed Unicode (a lone surrogate)';
  return undefined;
}

/** The first string (or object key) in `value` that no store keeps as sent: where, and why. */
function flawAt(value: unknown, path: string): { at: string; flaw: Flaw } | undefined {
  if (typeof value === 'string') {
    const flaw = flawOf(value);
    return flaw ? { at: path, flaw } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = flawAt(value[i], `${path}.${i}`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    const flaw = flawOf(k);
    if (flaw) return { at: path, flaw };
    const found = flawAt(v, `${path}.${k}`);
    if (found) return found;
  }
  return undefined;
}

/**
 * JSON writes either only as an escape (a raw NUL is not allowed in a string, and UTF-8 cannot
 * carry a lone surrogate), so a body without `\u0000` or `\ud800`-`\udfff` skips the walk.
 */
const SUSPECT = /\\u(?:0000|d[89a-f])/i;

export function registerJsonBodyParser(app: FastifyInstance): void {
  // As Fastify's own defaults: a body with __proto__ or constructor.prototype is refused.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    parse(request, text, (err, value) => {
      if (err) return done(err);
      const found = SUSPECT.test(text) ? flawAt(value, 'body') : undefined;
      if (found) return done(new AppError('invalid_request', `${found.at} ${found.flaw}.`, { fields: [{ field: found.at, message: found.flaw }] }), undefined);
      done(null, value);
    });
  });
}
