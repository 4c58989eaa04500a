// Small readers for what the AppView sends as open JSON (post records, embeds): everything arrives as
// `unknown` and is narrowed here, so the mapping never trusts a shape it has not checked.
import { SourceError } from '../types.js';

export type JsonObject = { [key: string]: unknown };

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A string with something in it, else null. */
export function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

/** A non-negative integer counter; 0 when absent or not a number. */
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.trunc(value))) : 0;
}

/** A non-negative integer, or null when absent (media width and height). */
export function optionalCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.trunc(value)) : null;
}

/** Milliseconds since the epoch of an ISO 8601 instant within years 0..9999, else undefined. */
export function instantMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return undefined;
  const year = new Date(ms).getUTCFullYear();
  return year >= 0 && year <= 9999 ? ms : undefined;
}

export function badResponse(message: string): never {
  throw new SourceError('bad_response', `The Bluesky AppView sent an answer we could not understand: ${message}`);
}
