import { linkBase } from '../../http/link-base.js';
import { assertDownloadable, signDownload, type SignedLink } from '../../exports/download-link.js';
import { findAccountExport } from '../../exports/export-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { NumericId, single } from '../../http/schemas.js';
import { Type } from '@sinclair/typebox';
import { DownloadLink, meta } from './schemas.js';

export function registerGetExportDownload(app: App, deps: Pick<Deps, 'bulk' | 'config' | 'secrets' | 'store'>): void {
  const baseOf = linkBase(deps.config);
  app.get(
    '/social/v1/bulk-export/exports/:id/download',
    {
      schema: {
        operationId: 'getExportDownload',
        tags: ['bulk-export'],
        summary: 'A download link for a completed export: it needs no API key and works until expiresAt.',
        description:
          'The link is signed and expires (15 minutes by default); ask again for a fresh one. Check the file against sha256. The link answers byte ranges (Range: bytes=N-, 206 Partial Content), so an interrupted download resumes from where it stopped, on this link or a fresh one; its ETag is the sha256 in quotes, for If-Range. An export that is not completed is 409 export_not_ready (details.status); another account’s export is 404 not_found.',
        params: Type.Object({ id: Type.String({ pattern: NumericId.pattern, description: 'the export’s id', examples: ['5764607523034234881'] }) }, { additionalProperties: false }),
        response: { 200: single(DownloadLink, 'The download link.') },
      },
      config: { errors: ['not_found', 'export_not_ready', 'export_expired'] },
    },
    async (request) => {
      const row = await findAccountExport(deps.store.db, request.auth!.accountId, request.params.id);
      if (!row) throw new AppError('not_found', `No export ${request.params.id}.`);
      assertDownloadable(row);
      const now = deps.bulk.clock();
      const ttlSeconds = deps.config.exports.linkTtlSeconds;
      // An object store clients can reach (S3) gives its own presigned URL; the local directory is
      // served by the gateway under its signed link.
      const objects = deps.bulk.objects;
      const link = objects.presignGet
        ? await objects.presignGet(row.object_key, { ttlSeconds, now, filename: `export-${row.id}.jsonl.gz` })
        : gatewayLink(signDownload(deps.secrets.current, row.id, now.getTime(), ttlSeconds), baseOf(request));
      return {
        data: { id: row.id, url: link.url, expiresAt: link.expiresAt, sizeBytes: Number(row.size_bytes), sha256: row.sha256 },
        meta: meta(request.id),
      };
    },
  );
}

const gatewayLink = (l: SignedLink, base: string) => ({ url: `${base}${l.path}`, expiresAt: l.expiresAt });
