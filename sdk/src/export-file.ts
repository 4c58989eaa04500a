// Export files: download a completed export by its signed link, streaming to disk while hashing, and
// keep the file only when its size and SHA-256 match the export's record.
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { CallOptions, PostOptions, SdgClient } from './client.js';
import { apiErrorFrom, ExportError, isAbort, NetworkError } from './errors.js';
import type { BodyOf, ExportDownload, ExportRecord } from './types.js';

export interface DownloadProgress {
  bytes: number;
  totalBytes: number | undefined;
}

export interface DownloadOptions extends CallOptions {
  onDownloadProgress?: (p: DownloadProgress) => void;
}

export interface ExportToFileOptions extends DownloadOptions, PostOptions {
  /** Called with each state of the export while waiting. */
  onProgress?: (record: ExportRecord) => void;
  intervalMs?: number;
  timeoutMs?: number;
}

export interface DownloadedExport {
  path: string;
  sizeBytes: number;
  sha256: string;
  export: ExportDownload;
}

export async function downloadExport(client: SdgClient, id: string, path: string, o: DownloadOptions): Promise<DownloadedExport> {
  const { data: link } = await client.exportDownload(id, o);
  let res: Response;
  try {
    res = await client.fetch(link.url, { signal: o.signal });
  } catch (error) {
    if (error instanceof NetworkError || isAbort(error)) throw error;
    throw new NetworkError(`Could not download export ${id}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (!res.ok || !res.body) {
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: the error says the status */
    }
    throw apiErrorFrom(res, body);
  }
  const hash = createHash('sha256');
  const totalBytes = link.sizeBytes ?? (Number(res.headers.get('content-length')) || undefined);
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      o.onDownloadProgress?.({ bytes, totalBytes });
      done(null, chunk);
    },
  });
  // Written beside the target and renamed only once verified: a bad or partial file never takes its name.
  const part = `${path}.part`;
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), tap, createWriteStream(part), { signal: o.signal });
    const sha256 = hash.digest('hex');
    if (link.sizeBytes !== null && link.sizeBytes !== undefined && bytes !== link.sizeBytes) {
      throw new ExportError(`Export ${id}: downloaded ${bytes} bytes, its record says ${link.sizeBytes}.`, id);
    }
    if (link.sha256 && sha256 !== link.sha256) throw new ExportError(`Export ${id}: the file's SHA-256 is ${sha256}, its record says ${link.sha256}.`, id);
    await rename(part, path);
    return { path, sizeBytes: bytes, sha256, export: link };
  } catch (error) {
    await rm(part, { force: true });
    throw error;
  }
}

export async function exportToFile(client: SdgClient, range: BodyOf<'generateExport'>, path: string, o: ExportToFileOptions): Promise<DownloadedExport> {
  const { data: queued } = await client.generateExport(range, o);
  await client.waitForExport(queued.id, { signal: o.signal, onProgress: o.onProgress, intervalMs: o.intervalMs, timeoutMs: o.timeoutMs });
  return downloadExport(client, queued.id, path, o);
}
