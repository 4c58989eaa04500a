// The target of download links: public (no API key), hidden from the OpenAPI document. Every way a
// link can be wrong (altered id, expiry or signature; an export that is not completed) answers 404
// not_found, so a guessed link tells nothing about which exports exist (the signature is checked
// before the export is read: download-link.ts); an expired link says so.
// A Range request gets its part (206), so an interrupted download resumes (byte-range.ts).
import { Type } from '@sinclair/typebox';
import { DOWNLOAD_PATH, exportExpired, verifiedDownload } from '../../exports/download-link.js';
import { chooseRange, matchesNoneMatch } from '../../exports/byte-range.js';
import { findExport } from '../../exports/export-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { logOf } from '../../http/logging.js';

export function registerDownloadFile(app: App, deps: Pick<Deps, 'bulk' | 'config' | 'metrics' | 'secrets' | 'store'>): void {
  app.get(
    `${DOWNLOAD_PATH}/:id`,
    {
      config: { public: true },
      schema: {
        hide: true,
        // No limits here: whatever was altered, the answer is the same 404.
        params: Type.Object({ id: Type.String() }),
        querystring: Type.Object({ expires: Type.Optional(Type.String()), sig: Type.Optional(Type.String()) }),
      },
    },
    async (request, reply) => {
      const row = await verifiedDownload(deps.secrets, {
        id: request.params.id,
        expiresText: request.query.expires ?? '',
        sig: request.query.sig ?? '',
        nowMs: deps.bulk.clock().getTime(),
        maxTtlSeconds: deps.config.exports.linkTtlSeconds,
        find: (id) => findExport(deps.store.db, id),
      });
      if (row?.expired_at) throw exportExpired(row);
      const key = row?.status === 'completed' ? row.object_key : undefined;
      const info = key ? await deps.bulk.objects.stat(key) : undefined;
      if (!row || !key || !info) throw new AppError('not_found', 'This export file is no longer available; request a new export.');
      // Export files never change once completed: their SHA-256 is a strong validator, so a client
      // resuming with If-Range gets the rest only of the file it began with.
      const validators = { etag: `"${row.sha256}"`, lastModified: new Date(row.completed_at ?? 0).toUTCString() };
      const size = info.sizeBytes;
      // A client that holds this file already (its ETag) gets 304 and no body.
      if (matchesNoneMatch(request.headers['if-none-match'], validators.etag)) {
        return reply.code(304).header('etag', validators.etag).header('last-modified', validators.lastModified).header('cache-control', 'private, no-store').send();
      }
      const choice = chooseRange({ method: request.method, range: request.headers.range, ifRange: oneHeader(request.headers['if-range']) }, size, validators);
      if (choice.kind === 'unsatisfiable') {
        throw new AppError('range_not_satisfiable', `The file has ${size} bytes; the range asked for lies outside it.`, { sizeBytes: size }, { 'content-range': `bytes */${size}` });
      }
      const range = choice.kind === 'part' ? choice.range : undefined;
      const file = deps.bulk.objects.createReadStream(key, range);
      // Once the headers are out, a failing read can only cut the transfer short: say so in the log.
      file.on('error', (err) => logOf(request).warn({ requestId: request.id, exportId: row.id, err }, 'export download failed mid-transfer'));
      if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
      const bytes = range ? range.end - range.start + 1 : size;
      // Counted once the transfer ends: all of it written ('finish'), or the connection gone first.
      const res = reply.raw;
      let counted = false;
      const count = (complete: boolean) => {
        if (counted) return;
        counted = true;
        deps.metrics.downloads.ended(range ? 'part' : 'whole', complete, bytes);
      };
      if (request.method !== 'HEAD') {
        res.once('finish', () => count(true));
        res.once('close', () => count(false));
      }
      return reply
        .header('content-type', 'application/gzip')
        .header('content-length', String(bytes))
        .header('accept-ranges', 'bytes')
        .header('etag', validators.etag)
        .header('last-modified', validators.lastModified)
        .header('content-disposition', `attachment; filename="export-${row.id}.jsonl.gz"`)
        .header('cache-control', 'private, no-store')
        // A download is a one-off transfer. Also, a keep-alive connection that served a streamed body
        // with a Content-Length is not seen as idle by Node's server, so a graceful stop would wait for it.
        .header('connection', 'close')
        .send(file);
    },
  );
}

// Node joins repeated headers it knows; If-Range it does not: several of them match nothing (the whole file).
const oneHeader = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? '' : v);
