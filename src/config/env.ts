// Small typed readers for environment variables. Each throws ConfigError naming the variable,
// so a bad value stops the start with a message an operator can act on.
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v === '' ? fallback : v;
}

export function optStr(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v === '' ? undefined : v;
}

export function num(env: Env, name: string, fallback: number, opts: { min?: number; max?: number; integer?: boolean } = {}): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  const { min = -Infinity, max = Infinity, integer = false } = opts;
  if (!Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    const kind = integer ? 'an integer' : 'a number';
    throw new ConfigError(`${name} must be ${kind} between ${min} and ${max}; got ${JSON.stringify(raw)}.`);
  }
  return v;
}

export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(raw)}.`);
  }
  return raw as T;
}

export function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = optStr(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')}); got a value that does not parse.`);
  }
  if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}; got ${parsed.protocol.replace(/:$/, '')}.`);
  }
  return raw;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false; got ${JSON.stringify(raw)}.`);
}
