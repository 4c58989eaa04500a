// Export files: download a completed export by its signed link, streaming to disk while hashing, and
// keep the file only when its size and SHA-256 match the export's record. A transfer cut short is
// resumed from the byte it reached (Range, with If-Range on the file's ETag), on a fresh link if needed.
import { createHash, type Hash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { CallOptions, PostOptions, SdgClient } from './client.js';
import { apiErrorFrom } from './error-codes.js';
import { ExportError, InvalidRequestError, isAbort, NetworkError, NotFoundError } from './errors.js';
import { describeError } from './transport.js';
import type { BodyOf, ExportDownload, ExportRecord } from './types.js';

export interface DownloadProgress {
  bytes: number;
  totalBytes: number | undefined;
}

export interface DownloadOptions extends CallOptions {
  /** Called as bytes arrive: how many so far, and of how many when the gateway said. */
  onDownloadProgress?: ((p: DownloadProgress) => void) | undefined;
  /**
   * How many times a transfer cut short (a dropped connection, a body that ends early) is resumed
   * from the byte it reached, with a Range request (default 5; 0 never resumes).
   */
  resumes?: number | undefined;
  /**
   * Go on from `path.part` where an earlier call left it (its bytes hashed again, the rest asked for
   * with a Range), and keep the part when this call fails (the network, an abort) so that the next
   * goes on. Size and SHA-256 are checked as always; a part that was not this file's beginning is
   * discarded and the file downloaded whole. Default false: a download starts from nothing.
   */
  continuePart?: boolean | undefined;
}

export interface ExportToFileOptions extends DownloadOptions, PostOptions {
  /** Called with each state of the export while waiting. */
  onProgress?: ((record: ExportRecord) => void) | undefined;
  /** Between polls of the export's record (default 1000 ms). */
  intervalMs?: number | undefined;
  /**
   * How long to wait for the export to complete (default 10 minutes): WaitTimeoutError. Not the client's
   * per-attempt timeoutMs (SdgClientOptions), which still applies to each call.
   */
  timeoutMs?: number | undefined;
}

export interface DownloadedExport {
  path: string;
  sizeBytes: number;
  sha256: string;
  export: ExportDownload;
}

export async function downloadExport(client: SdgClient, id: string, path: string, o: DownloadOptions): Promise<DownloadedExport> {
  const { data: link } = await client.exportDownload(id, o);
  // Written beside the target and renamed only once verified: a bad or partial file never takes its name.
  const part = `${path}.part`;
  let earlier = o.continuePart ? await onDisk(part) : undefined;
  if (earlier && earlier.have > 0 && typeof link.sizeBytes === 'number' && earlier.have >= link.sizeBytes) {
    // Complete already (a run stopped before its rename), or longer than the file: kept or discarded.
    const sha256 = earlier.hash.copy().digest('hex');
    if (earlier.have === link.sizeBytes && sha256 === link.sha256) {
      await rename(part, path);
      return { path, sizeBytes: earlier.have, sha256, export: link };
    }
    earlier = undefined;
  }
  try {
    return await transfer(client, id, path, part, link, o, earlier);
  } catch (error) {
    if (!(error instanceof ExportError) || !earlier?.have) throw error;
    // The part an earlier download left was not the beginning of this file: once more, whole (on a
    // fresh link: the first may have expired during the transfer).
    return transfer(client, id, path, part, (await client.exportDownload(id, o)).data, o, undefined);
  }
}

/** Downloads into `part` (after what `from` says it holds), verifies it and renames it to `path`. */
async function transfer(client: SdgClient, id: string, path: string, part: string, first: ExportDownload, o: DownloadOptions, from: OnDisk | undefined): Promise<DownloadedExport> {
  let link = first;
  const resumesAllowed = o.resumes ?? 5;
  try {
    let have = from?.have ?? 0; // bytes of the file in `part`, in order from its first
    let hash = from?.hash ?? createHash('sha256');
    let etag: string | undefined;
    for (let resumes = 0; ; resumes++) {
      // A link that has expired (or is about to) is asked for again: the resume needs a valid one.
      const fresh = resumes > 0 && Date.now() >= Date.parse(link.expiresAt) - 5_000;
      if (fresh) link = (await client.exportDownload(id, o)).data;
      const headers = have > 0 ? { range: `bytes=${have}-`, ...(etag ? { 'if-range': etag } : {}) } : {};
      let res: Response;
      try {
        res = await open(client, id, link.url, headers, o.signal);
      } catch (error) {
        // Expired by the server's clock though not by ours (clocks differ): one fresh link, and again.
        if (resumes === 0 || fresh || !(error instanceof NotFoundError)) throw beyondEnd(error, id, have, link);
        link = (await client.exportDownload(id, o)).data;
        res = await open(client, id, link.url, headers, o.signal).catch((e: unknown) => Promise.reject(beyondEnd(e, id, have, link)));
      }
      if (res.status === 206) {
        // Only the rest of the file begun: anything else is started over.
        const start = /^bytes (\d+)-\d+\/\d+$/.exec(res.headers.get('content-range') ?? '')?.[1];
        if (Number(start) !== have) {
          await res.body?.cancel();
          throw new NetworkError(`Could not resume export ${id}: asked for bytes from ${have}, got ${res.headers.get('content-range') ?? 'no Content-Range'}.`);
        }
      } else if (have > 0) {
        // 200: the whole file (the server would not resume, or the file changed): start over.
        have = 0;
        hash = createHash('sha256');
      }
      etag = res.headers.get('etag') ?? etag;
      const totalBytes = link.sizeBytes ?? (res.status === 200 ? Number(res.headers.get('content-length')) || undefined : undefined);
      const cut = await receive(res, part, have, hash, totalBytes, client.timeoutMs, o);
      if (!cut) break;
      if (resumes >= resumesAllowed || o.signal?.aborted) {
        throw new NetworkError(`Could not download export ${id}: the transfer was cut short${resumes ? ` ${resumes + 1} times` : ''}: ${describeError(cut.error)}`, { cause: cut.error });
      }
      // What reached the disk is the truth: hash it again from there, and ask for the rest.
      ({ have, hash } = await onDisk(part));
    }
    const { size: bytes } = await stat(part);
    const sha256 = hash.digest('hex');
    if (link.sizeBytes !== null && link.sizeBytes !== undefined && bytes !== link.sizeBytes) {
      throw new ExportError(`Export ${id}: downloaded ${bytes} bytes, its record says ${link.sizeBytes}.`, id);
    }
    if (link.sha256 && sha256 !== link.sha256) throw new ExportError(`Export ${id}: the file's SHA-256 is ${sha256}, its record says ${link.sha256}.`, id);
    await rename(part, path);
    return { path, sizeBytes: bytes, sha256, export: link };
  } catch (error) {
    // With continuePart, what arrived is kept for the next call unless it proved wrong.
    if (!o.continuePart || error instanceof ExportError) await rm(part, { force: true });
    throw error;
  }
}

/**
 * A resume refused with 416: the file ends before the byte the record's size says is still to come,
 * so the file does not match its record (ExportError, not a request of ours that was invalid).
 */
function beyondEnd(error: unknown, id: string, have: number, link: ExportDownload): unknown {
  if (!(error instanceof InvalidRequestError) || error.status !== 416 || have === 0) return error;
  return new ExportError(`Export ${id}: the file ends before byte ${have}, its record says ${link.sizeBytes} bytes.`, id);
}

/** Fetches the link; an error answer is thrown as the API error it is. */
async function open(client: SdgClient, id: string, url: string, headers: Record<string, string>, signal: AbortSignal | undefined): Promise<Response> {
  let res: Response;
  try {
    res = await client.fetch(url, { headers, signal });
  } catch (error) {
    // The caller's own reason, as given.
    if (signal?.aborted) throw signal.reason;
    if (error instanceof NetworkError || isAbort(error)) throw error;
    throw new NetworkError(`Could not download export ${id}: ${describeError(error)}`, { cause: error });
  }
  if ((res.status !== 200 && res.status !== 206) || !res.body) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: the error says the status */
    }
    throw apiErrorFrom(res, body);
  }
  return res;
}

/**
 * Streams the answer's body after the `have` bytes already in `part`, hashing it. Resolves undefined
 * when the body ended with the file complete as far as its record tells, or `{ error }` when the
 * transfer was cut short (the connection failed mid-body, no bytes came for `stallMs`, or the body
 * ended early): resumable. A failure to write, or an abort, rejects.
 */
async function receive(res: Response, part: string, have: number, hash: Hash, totalBytes: number | undefined, stallMs: number, o: DownloadOptions): Promise<{ error: unknown } | undefined> {
  let bytes = have;
  let readError: unknown;
  const source = Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  source.once('error', (error) => {
    readError ??= error;
  });
  // A body that stops coming (a connection dropped without a word) is a cut too, after stallMs.
  let stall: NodeJS.Timeout | undefined;
  const arm = () => {
    if (!stallMs) return;
    clearTimeout(stall);
    stall = setTimeout(() => source.destroy(new Error(`no bytes for ${stallMs} ms`)), stallMs);
  };
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      arm();
      hash.update(chunk);
      bytes += chunk.length;
      o.onDownloadProgress?.({ bytes, totalBytes });
      done(null, chunk);
    },
  });
  try {
    arm();
    await pipeline(source, tap, createWriteStream(part, { flags: have > 0 ? 'a' : 'w' }), { signal: o.signal });
  } catch (error) {
    // The caller's own reason (a TimeoutError from AbortSignal.timeout), not the pipeline's AbortError.
    if (o.signal?.aborted) throw o.signal.reason;
    if (readError === undefined) throw error;
    return { error: readError };
  } finally {
    clearTimeout(stall);
  }
  if (totalBytes !== undefined && bytes < totalBytes) return { error: new Error(`the body ended after ${bytes} of ${totalBytes} bytes`) };
  return undefined;
}

interface OnDisk {
  have: number;
  hash: Hash;
}

async function onDisk(part: string): Promise<OnDisk> {
  const hash = createHash('sha256');
  let have = 0;
  try {
    for await (const chunk of createReadStream(part)) {
      hash.update(chunk as Buffer);
      have += (chunk as Buffer).length;
    }
  } catch (error) {
    // No part (or cut before the first write opened it): nothing to go on from.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return { have, hash };
}

export async function exportToFile(client: SdgClient, range: BodyOf<'generateExport'>, path: string, o: ExportToFileOptions): Promise<DownloadedExport> {
  const { data: queued } = await client.generateExport(range, o);
  await client.waitForExport(queued.id, { signal: o.signal, onProgress: o.onProgress, intervalMs: o.intervalMs, timeoutMs: o.timeoutMs });
  return downloadExport(client, queued.id, path, o);
}
