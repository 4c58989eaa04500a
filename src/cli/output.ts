/** Prints a result: JSON with --json (for scripts), else a short human line. */
export function print(json: boolean, value: unknown, human: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${human}\n`);
}

export function parsePositiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliError(`${name} must be a positive integer; got ${JSON.stringify(raw)}.`);
  return n;
}

export class CliError extends Error {}
