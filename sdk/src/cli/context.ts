// What every command needs: the client built from the global options, and how to write.
import type { Command } from 'commander';
import { SdgClient } from '../client.js';
import { AuthenticationError, InvalidRequestError } from '../errors.js';
import type { Output } from './output.js';
import { note } from './output.js';

export interface GlobalOptions {
  apiKey?: string;
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

export function contextOf(cmd: Command): Context {
  const o = cmd.optsWithGlobals<GlobalOptions>();
  if (!o.apiKey) throw new AuthenticationError('No API key: pass --api-key or set SDG_API_KEY.', 0, 'missing_api_key', undefined, undefined);
  const maxRetries = Number(o.maxRetries);
  if (!Number.isInteger(maxRetries) || maxRetries < 0) throw usageError('--max-retries takes a whole number.');
  const out: Output = { json: Boolean(o.json), progress: o.progress };
  const client = new SdgClient({
    apiKey: o.apiKey,
    baseUrl: o.baseUrl,
    retry: { maxRetries },
    onRetry: (e) => {
      if (!out.json) note(`retrying in ${(e.delayMs / 1000).toFixed(1)} s (${e.status ? `HTTP ${e.status}` : 'connection failed'})`);
    },
  });
  return { client, out };
}

/** Parses a whole number option. */
export function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw usageError(`${name} takes a whole number; got ${value}.`);
  return n;
}
