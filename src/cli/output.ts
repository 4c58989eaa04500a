// Control characters written as escapes (`\x1b`), so that text a caller chose (a key's name, made
// through the API) cannot move the cursor, recolour or retitle the operator's terminal.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_BUT_LINES = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const escaped = (c: string) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`;
/** `text` with every control character escaped (`lines`: newlines kept, for a human text of several lines). */
export function visible(text: string, lines = false): string {
  return text.replace(lines ? CONTROL_BUT_LINES : CONTROL, escaped);
}

/** Prints a result: JSON with --json (for scripts), else a short human text. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${visible(human, true)}\n`);
}

export function parsePositiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliError(`${name} must be a positive integer; got ${JSON.stringify(raw)}.`);
  return n;
}

/** A name or label: not blank, at most `max` characters, no control characters (a store would keep them, a terminal would act on them). */
export function parseName(option: string, raw: string, max: number): string {
  if (raw.trim() === '') throw new CliError(`${option} must not be blank.`);
  if ([...raw].length > max) throw new CliError(`${option} must be at most ${max} characters.`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(raw)) throw new CliError(`${option} must not hold control characters.`);
  return raw;
}

export class CliError extends Error {}

/** Rows as aligned columns under a header row (the readable form of a list). */
export function table(headers: string[], rows: Array<Array<string | number | null>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : visible(String(c)))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
