// Small readers for X's JSON: everything arrives as `unknown` and is narrowed here, so the mapping
// code never trusts a shape it has not checked.
import { SourceError } from '../types.js';

export type JsonObject = { [key: string]: unknown };

export function asObject(value: unknown): JsonObject | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The first argument that is an array (X's post-era and tweet-era names for the same list). */
export function firstArray(...values: unknown[]): unknown[] {
  for (const value of values) if (Array.isArray(value)) return value;
  return [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A string with something in it; X sends "" for an unset profile URL. */
export function nonEmpty(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

export function asBoolean(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** A non-negative integer counter: the first finite number among `keys` of `obj`, clamped at 0; 0 when absent. */
export function countOf(obj: JsonObject | undefined, ...keys: string[]): number {
  for (const key of keys) {
    const value = obj?.[key];
    if (typeof value === 'number' && Number.isFinite(value)) return Math.min(Number.MAX_SAFE_INTEGER, Math.max(0, Math.trunc(value)));
  }
  return 0;
}

/** A non-negative integer, or null when absent (media width and height). */
export function optionalCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.trunc(value)) : null;
}

export function badResponse(message: string): never {
  throw new SourceError('bad_response', `X sent an answer we could not understand: ${message}`);
}

const NUMERIC_ID = /^[0-9]{1,19}$/;

export function isNumericId(value: string): boolean {
  return NUMERIC_ID.test(value);
}

/** An X snowflake id (decimal digits); anything else is a bad response. */
export function numericId(value: unknown, what: string): string {
  if (typeof value === 'string' && NUMERIC_ID.test(value)) return value;
  return badResponse(`${what} is not a numeric id`);
}

/** An ISO 8601 instant, normalized to `toISOString()`; anything unparseable is a bad response. */
export function isoInstant(value: unknown, what: string): string {
  if (typeof value === 'string') {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) {
      const date = new Date(ms);
      const year = date.getUTCFullYear();
      if (year >= 0 && year <= 9999) return date.toISOString();
    }
  }
  return badResponse(`${what} is not a timestamp`);
}
