// One attempt of a request: the fetch under the attempt's own deadline and the caller's signal, and
// (for API calls) its body read within the same deadline between bytes, so that an answer whose
// body stalls cannot hang the call. Says how it went, for the retry loop (transport.ts) to decide.
import { neverSent } from './retry-policy.js';

export type Outcome =
  /** An answer; with readBody, its body already read in full. */
  | { kind: 'answer'; response: Response; body: Uint8Array | undefined }
  /** No answer: `unsent` when the failure proves the request never left. */
  | { kind: 'failed'; error: unknown; timedOut: boolean; unsent: boolean }
  /** A 2xx answer whose body failed or stalled: the call went through. */
  | { kind: 'cut'; response: Response; error: unknown; timedOut: boolean };

export interface AttemptSpec {
  fetch: typeof fetch;
  url: string;
  init: RequestInit;
  caller: AbortSignal | undefined;
  /** For the headers, then between the body's bytes with readBody (0: no limit). */
  timeoutMs: number | undefined;
  /** Read the body here (small JSON answers), or hand it on as it streams (downloads). */
  readBody: boolean;
}

export async function attemptOnce(spec: AttemptSpec): Promise<Outcome> {
  const { caller, timeoutMs } = spec;
  // Each attempt gets a signal of its own that follows the caller's, listened to directly (a
  // Request made from another follows the other's signal through a link Node 20's collector may
  // drop mid-call: an inline AbortSignal.timeout then never reached the attempt).
  const abort = new AbortController();
  const onAbort = () => abort.abort(caller!.reason);
  if (caller?.aborted) abort.abort(caller.reason);
  caller?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (what: string) => {
    clearTimeout(timer);
    if (!timeoutMs) return;
    timer = setTimeout(() => {
      timedOut = true;
      abort.abort(new Error(`${what} within ${timeoutMs} ms`));
    }, timeoutMs);
  };
  try {
    arm('no answer');
    let response: Response;
    try {
      response = await spec.fetch(spec.url, { ...spec.init, signal: abort.signal });
    } catch (caught) {
      if (caller?.aborted) throw caller.reason;
      return { kind: 'failed', error: timedOut ? abort.signal.reason : caught, timedOut, unsent: !timedOut && neverSent(caught) };
    }
    // A download's body is timed by its reader (export-file.ts, which resumes a stalled one).
    if (!spec.readBody) return { kind: 'answer', response, body: undefined };
    try {
      const body = await readAll(response, () => arm('no bytes of the answer'));
      return { kind: 'answer', response: rebuilt(response, body), body };
    } catch (caught) {
      if (caller?.aborted) throw caller.reason;
      const error = timedOut ? abort.signal.reason : caught;
      // Not 2xx: nothing was charged, and the status tells what it was.
      if (!response.ok) return { kind: 'answer', response: rebuilt(response, new Uint8Array()), body: new Uint8Array() };
      return { kind: 'cut', response, error, timedOut };
    }
  } finally {
    clearTimeout(timer);
    // Not left on a signal the caller may give many calls. Once the headers are in, a streamed body
    // is stopped by whoever reads it (the SDK's download: its pipeline's signal).
    caller?.removeEventListener('abort', onAbort);
  }
}

async function readAll(response: Response, onBytes: () => void): Promise<Uint8Array> {
  if (!response.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  onBytes();
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    onBytes();
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** The answer again, with the body read (as openapi-fetch and the caller expect a Response). */
function rebuilt(response: Response, body: Uint8Array): Response {
  const noBody = body.length === 0 || [101, 204, 205, 304].includes(response.status);
  const out = new Response(noBody ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
  // Where it came from, for the errors that name it.
  Object.defineProperty(out, 'url', { value: response.url });
  return out;
}
