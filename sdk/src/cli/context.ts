// What every command needs: the client built from the global options, and how to write.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { SdgClient } from '../client.js';
import { AuthenticationError, InvalidRequestError } from '../errors.js';
import type { Output } from './output.js';
import { note } from './output.js';

export interface GlobalOptions {
  apiKey?: string;
  apiKeyFile?: string;
  baseUrl: string;
  json?: boolean;
  progress: boolean;
  maxRetries: string;
}

export interface Context {
  client: SdgClient;
  out: Output;
}

/** A command-line mistake: exit code 2, like a 400. */
export function usageError(message: string): InvalidRequestError {
  return new InvalidRequestError(message, 0, 'usage', undefined, undefined);
}

export async function contextOf(cmd: Command): Promise<Context> {
  const o = cmd.optsWithGlobals<GlobalOptions>();
  const apiKey = await apiKeyOf(cmd, o);
  if (!apiKey) throw new AuthenticationError('No API key: set SDG_API_KEY, or pass --api-key-file (or --api-key).', 0, 'missing_api_key', undefined, undefined);
  // Decimal digits only: Number() took '', '0x10' and '1e3'.
  const maxRetries = /^[0-9]{1,3}$/.test(String(o.maxRetries)) ? Number(o.maxRetries) : NaN;
  if (Number.isNaN(maxRetries)) throw usageError(`--max-retries takes a whole number from 0 to 999, in decimal digits; got ${JSON.stringify(o.maxRetries)}.`);
  const out: Output = { json: Boolean(o.json), progress: o.progress };
  const client = new SdgClient({
    apiKey,
    baseUrl: baseUrlOf(o.baseUrl),
    retry: { maxRetries },
    onRetry: (e) => {
      if (!out.json) note(`retrying in ${(e.delayMs / 1000).toFixed(1)} s (${e.status ? `HTTP ${e.status}` : 'connection failed'})`);
    },
  });
  return { client, out };
}

/** The key from --api-key-file (a file, or - for stdin), else --api-key or SDG_API_KEY. */
async function apiKeyOf(cmd: Command, o: GlobalOptions): Promise<string | undefined> {
  if (o.apiKeyFile === undefined) return o.apiKey;
  if (o.apiKey && sourceOf(cmd, 'apiKey') === 'cli') throw usageError('Pass --api-key or --api-key-file, not both.');
  let text: string;
  try {
    text = o.apiKeyFile === '-' ? await readStdin() : await readFile(o.apiKeyFile, 'utf8');
  } catch (err) {
    throw usageError(`Cannot read --api-key-file ${o.apiKeyFile}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  const key = text.trim();
  if (!key || /\s/.test(key)) throw usageError(`--api-key-file ${o.apiKeyFile} holds no key (one line, the key alone).`);
  return key;
}

/** Where an option's value came from ('cli', 'env', 'default'), looked up on the command that holds it. */
function sourceOf(cmd: Command, name: string): string | undefined {
  for (let c: Command | null = cmd; c; c = c.parent) if (c.getOptionValueSource(name) !== undefined) return c.getOptionValueSource(name);
  return undefined;
}

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The gateway's URL, checked; one with a user name or password is refused without printing them. */
function baseUrlOf(value: string): string {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw usageError('--base-url (or SDG_BASE_URL) is not a URL.');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw usageError(`--base-url takes an http or https URL; got ${u.protocol}.`);
  if (u.username || u.password) throw usageError(`--base-url must not hold a user name or password (${u.protocol}//…@${u.host}): the key goes in SDG_API_KEY.`);
  return value;
}

/**
 * Parses a count option such as --max: decimal digits, at least 1. (0 fetched a page, paid for it
 * and wrote nothing; Number() also took "", "0x10" and "1e3".)
 */
export function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = /^[0-9]{1,15}$/.test(value) ? Number(value) : NaN;
  if (!(n >= 1)) throw usageError(`${name} takes a whole number of at least 1, in decimal digits; got ${JSON.stringify(value)}.`);
  return n;
}
