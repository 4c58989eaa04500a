import { Type } from '@sinclair/typebox';
import { findAccountExport } from '../../exports/export-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { NumericId, single } from '../../http/schemas.js';
import { exportRecord, ExportRecord, meta } from './schemas.js';

export function registerGetExport(app: App, deps: Pick<Deps, 'store'>): void {
  app.get(
    '/social/v1/bulk-export/exports/:id',
    {
      schema: {
        operationId: 'getExport',
        tags: ['bulk-export'],
        summary: "One of the caller's exports, in any status: queued, running, completed (with tweetCount, sizeBytes, sha256) or failed (with error).",
        description: 'Poll this after generating an export: it answers whatever the status, with startedAt once running and the counts and sha256 once completed. Another account’s export is 404 not_found.',
        params: Type.Object({ id: Type.String({ pattern: NumericId.pattern, description: 'the export’s id', examples: ['5764607523034234881'] }) }, { additionalProperties: false }),
        response: { 200: single(ExportRecord, 'The export.') },
      },
      config: { errors: ['not_found'] },
    },
    async (request) => {
      // Another account's export is not_found, exactly as one that never existed.
      const row = await findAccountExport(deps.store.db, request.auth!.accountId, request.params.id);
      if (!row) throw new AppError('not_found', `No export ${request.params.id}.`);
      return { data: exportRecord(row), meta: meta(request.id) };
    },
  );
}
