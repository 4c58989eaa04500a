// The JSON body parser: Fastify's own (prototype poisoning refused as by default), and a string
// holding U+0000 refused with a 400 naming its field. Postgres refuses a NUL in text, so without
// this `{"name":"\u0000"}` answered 500 there (and was stored on SQLite): the URL's %00 is refused
// the same way (app.ts).
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors/app-error.js';

/** The path of the first string (or object key) in `value` that holds a NUL, or undefined. */
function nulAt(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const at = nulAt(value[i], `${path}.${i}`);
      if (at) return at;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return path;
    const at = nulAt(v, `${path}.${k}`);
    if (at) return at;
  }
  return undefined;
}

export function registerJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string; // parseAs: 'string'
    parse(request, text, (err, value) => {
      if (err) return done(err);
      // JSON can only write a NUL as the escape \u0000, so most bodies skip the walk.
      const at = text.includes('\\u0000') ? nulAt(value, 'body') : undefined;
      if (at) return done(new AppError('invalid_request', `${at} holds a NUL character (\\u0000).`, { fields: [{ field: at, message: 'holds a NUL character' }] }), undefined);
      done(null, value);
    });
  });
}
