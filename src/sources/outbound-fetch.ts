// Every outbound HTTP call of the gateway (the X API, the Bluesky AppView, wallet RPC endpoints)
// goes through outboundFetch: undici's fetch from npm (pinned), on a dispatcher that asks for gzip or
// deflate only and refuses an answer encoded with Brotli before fetch builds a decoder for it.
//
// Why: Node 20 is end-of-life. Its Brotli (1.1.0) has the decoder's out-of-bounds write
// (CVE-2026-111497, fixed only in Node 22.23.4, 24.22.1 and 26.12.1), and Node's own fetch decodes
// any answer sent with `Content-Encoding: br`, asked for or not (it asks for br over https), so a
// hostile or compromised upstream (an RPC provider, say) could reach it. Node 20's bundled undici
// (6.24.1) also predates the 6.x fixes of 6.27.0. Refusing after fetch resolved would be too late:
// fetch pipes the first bytes through its decoders as they arrive, read or not.
import type { Dispatcher } from 'undici';
import { findCause } from '../errors/cause-chain.js';

/** The encodings we ask for: fetch decodes these with zlib, not Brotli. */
const ACCEPTED_ENCODINGS = 'gzip, deflate';

/**
 * An answer the gateway would not decode (its `Content-Encoding` names Brotli). It does not name the
 * origin: it reaches clients in upstream errors, and an RPC endpoint's host is the operator's.
 */
export class RefusedEncodingError extends Error {
  constructor(readonly encoding: string) {
    super(`the answer came with Content-Encoding "${encoding.slice(0, 40)}", which this gateway does not decode (it asks for ${ACCEPTED_ENCODINGS})`);
    this.name = 'RefusedEncodingError';
  }
}

/** The refusal behind a failed call (fetch wraps it as its cause), if that is why it failed. */
export function refusedEncoding(err: unknown): RefusedEncodingError | undefined {
  return findCause(err, (e): e is RefusedEncodingError => e instanceof RefusedEncodingError);
}

/** Whether a Content-Encoding value names Brotli among its codings. */
export function namesBrotli(value: string): boolean {
  return value.split(',').some((c) => c.trim().toLowerCase() === 'br');
}

type Headers = Dispatcher.DispatchOptions['headers'];

/**
 * The request's headers with Accept-Encoding set to ours. undici's fetch (the only caller of this
 * dispatcher) passes them as a plain object; any other form is refused rather than guessed at.
 */
export function withAcceptedEncodings(headers: Headers): Headers {
  if (headers != null && (typeof headers !== 'object' || Array.isArray(headers) || Symbol.iterator in headers)) {
    throw new TypeError('outboundFetch: request headers must come from fetch as a plain object');
  }
  const out: Record<string, string | string[] | undefined> = {};
  for (const [k, v] of Object.entries(headers ?? {})) if (k.toLowerCase() !== 'accept-encoding') out[k] = v;
  out['accept-encoding'] = ACCEPTED_ENCODINGS;
  return out;
}

/** The callbacks RefuseBrotli overrides, as undici calls them. */
interface HeadersHandler {
  onConnect(abort: (err?: Error) => void): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
}

interface Made {
  fetch: typeof import('undici').fetch;
  dispatcher: Dispatcher;
}

// undici is loaded on the first outbound call: the demo network (`npm start`) never makes one.
let made: Promise<Made> | undefined;

async function make(): Promise<Made> {
  const { Agent, DecoratorHandler, fetch } = await import('undici');
  // Passes every callback on to fetch's handler (its type declares none of them).
  const Decorator = DecoratorHandler as unknown as new (handler: Dispatcher.DispatchHandlers) => HeadersHandler;
  class RefuseBrotli extends Decorator {
    private abort: ((err: Error) => void) | undefined;
    override onConnect(abort: (err?: Error) => void): void {
      this.abort = abort;
      super.onConnect(abort);
    }
    override onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
      for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
        if (String(rawHeaders[i]).toLowerCase() !== 'content-encoding') continue;
        const value = String(rawHeaders[i + 1]);
        if (!namesBrotli(value)) continue;
        // The request ends here with this error: fetch never sees these headers, so it makes no decoder.
        const refused = new RefusedEncodingError(value);
        if (!this.abort) throw refused;
        this.abort(refused);
        return false;
      }
      return super.onHeaders(statusCode, rawHeaders, resume, statusText);
    }
  }
  const dispatcher = new Agent().compose(
    (dispatch) => (opts, handler) => dispatch({ ...opts, headers: withAcceptedEncodings(opts.headers) }, new RefuseBrotli(handler) as Dispatcher.DispatchHandlers),
  );
  return { fetch, dispatcher };
}

/** fetch for calls to other services; see the top of this file. Takes a URL or a string, not a Request. */
export const outboundFetch = (async (input: string | URL, init?: RequestInit): Promise<Response> => {
  if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('outboundFetch takes a URL or a string');
  const { fetch, dispatcher } = await (made ??= make());
  return (await fetch(input, { ...(init as object), dispatcher })) as unknown as Response;
}) as typeof fetch;
