/** Prints a result: JSON with --json (for scripts), else a short human line. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
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
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new CliError(`${option} must not hold control characters.`);
  return raw;
}

export class CliError extends Error {}

/** Rows as aligned columns under a header row (the readable form of a list). */
export function table(headers: string[], rows: Array<Array<string | number | null>>): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n');
}
