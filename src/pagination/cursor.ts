import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors/app-error.js';

// Opaque cursors: base64url(JSON position) + "." + HMAC over the list's identity and the position.
// The list identity (route, parameters, account) is signed but not carried, so a cursor of one list
// fails verification on any other.
export class CursorCodec {
  constructor(private readonly secret: string) {}

  encode(list: string, position: unknown): string {
    const body = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${body}.${this.sign(list, body)}`;
  }

  decode<T>(list: string, cursor: string): T {
    const dot = cursor.indexOf('.');
    const body = cursor.slice(0, dot);
    const sig = cursor.slice(dot + 1);
    if (dot <= 0 || !sig) throw invalid();
    const want = Buffer.from(this.sign(list, body));
    const got = Buffer.from(sig);
    if (want.length !== got.length || !timingSafeEqual(want, got)) throw invalid();
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as T;
    } catch {
      throw invalid();
    }
  }

  private sign(list: string, body: string): string {
    return createHmac('sha256', this.secret).update('cursor\0').update(list).update('\0').update(body).digest('base64url').slice(0, 32);
  }
}

function invalid(): AppError {
  return new AppError('invalid_cursor', 'The cursor was not issued by this service for this list; start again without a cursor.', { field: 'cursor' });
}
