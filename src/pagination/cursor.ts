import { createHmac } from 'node:crypto';
import { signedByAny, type SigningSecrets } from '../domain/signing-secrets.js';
import { AppError } from '../errors/app-error.js';

// Opaque cursors: base64url(JSON position) + "." + HMAC over the list's identity and the position.
// The list identity (route and parameters; the account too for an account's own lists: keys, usage,
// watchlist, exports) is signed but not carried, so a cursor of one list fails verification on any
// other. A social list's cursor (a timeline, a tweet's retweeters) is not tied to the account: the
// data is public, and the same page is the same for every caller. Signed with the current secret; the previous one is still
// accepted during a rotation (signing-secrets.ts).
export class CursorCodec {
  constructor(private readonly secrets: SigningSecrets) {}

  encode(list: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${sign(this.secrets.current, list, body)}`;
  }

  decode<T>(list: string, cursor: string): T {
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    const sig = cursor.slice(dot + 1);
    if (dot <= 0 || !sig) throw invalidCursor();
    if (!signedByAny(this.secrets, sig, (secret) => sign(secret, list, body))) throw invalidCursor();
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      throw invalidCursor();
    }
  }
}

function sign(secret: string, list: string, body: string): string {
  return createHmac('sha256', secret).update('cursor\0').update(list).update('\0').update(body).digest('base64url').slice(0, 32);
}

/** The answer to a cursor that was not issued for the list it is given to (also when its signed position names something else). */
export function invalidCursor(): AppError {
  return new AppError('invalid_cursor', 'The cursor was not issued by this service for this list; start again without a cursor.', { field: 'cursor', fields: [{ field: 'querystring.cursor', message: 'was not issued by this service for this list' }] });
}
