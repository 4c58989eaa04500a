import { LABEL_FORBIDDEN, LABEL_INVISIBLE } from '../http/schemas.js';

// Control characters written as escapes (`\x1b`), so that text a caller chose (a key's name, made
// through the API) cannot move the cursor, recolour or retitle the operator's terminal.
// The text-direction controls too (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069): with
// them a name reads reversed, and the columns after it with it.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escaped = (c: string) => {
  const code = c.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};
/** `text` with every control character escaped (`lines`: newlines kept, for a human text of several lines). */
export function visible(text: string, lines = false): string {
  return text.replace(lines ? CONTROL_BUT_LINES : CONTROL, escaped);
}

/** Prints a result: JSON with --json (for scripts), else a short human text. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${visible(human, true)}\n`);
}

/**
 * A whole number written in decimal digits, as the API takes them: `Number` alone read `1e3`,
 * `0x10` and ` 5` as numbers too. At most 2^53 - 1, the largest a JavaScript number holds exactly.
 */
export function parseCount(name: string, raw: string, min: 0 | 1): number {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw new CliError(`${name} must be a ${min === 1 ? 'positive' : 'non-negative'} integer in decimal digits, at most ${Number.MAX_SAFE_INTEGER}; got ${JSON.stringify(raw)}.`);
  return n;
}

/** `--limit` of a list: 1 to 1000, as `sdg jobs list` (a page the terminal or a script can hold). */
export function parseListLimit(raw: string): number {
  const n = parsePositiveInt('--limit', raw);
  if (n > 1_000) throw new CliError('--limit must be at most 1000.');
  return n;
}

/** The most calls a minute an account's override may allow: the stores keep it as a 32-bit integer. */
export const MAX_RATE_LIMIT_PER_MINUTE = 2_147_483_647;

/** `--rate-limit-per-minute`: a whole number of calls a minute (or, where `plan` is taken, that word). */
export function parseRateLimit(raw: string, planAllowed: boolean): number {
  const or = planAllowed ? ', or `plan` to follow the plan\'s again' : '';
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_RATE_LIMIT_PER_MINUTE) {
    throw new CliError(`--rate-limit-per-minute must be a whole number of calls a minute from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}${or}; got ${JSON.stringify(raw)}.`);
  }
  return n;
}

export function parsePositiveInt(name: string, raw: string): number {
  return parseCount(name, raw, 1);
}

/** A name or label: not blank (nor only invisible characters), at most `max` characters, no control or text-direction characters (a store would keep them, a terminal would act on them). */
export function parseName(option: string, raw: string, max: number): string {
  if (BLANK.test(raw)) throw new CliError(`${option} must not be blank.`);
  if ([...raw].length > max) throw new CliError(`${option} must be at most ${max} characters.`);
  if (FORBIDDEN.test(raw)) throw new CliError(`${option} must not hold control or text-direction characters.`);
  return raw;
}

// The API's rules for a label (src/http/schemas.ts), in two parts for two messages.
const BLANK = new RegExp(`^[${LABEL_INVISIBLE}]*$`, 'u');
const FORBIDDEN = new RegExp(`[${LABEL_FORBIDDEN}]`, 'u');

/** A command that cannot do what was asked: `code` and `exitCode` for scripts (`refused`, 2, unless said), `details` in its JSON. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly code = 'refused',
    readonly exitCode = 2,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Rows as aligned columns under a header row (the readable form of a list). */
export function table(headers: string[], rows: Array<Array<string | number | null>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : visible(String(c)))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
