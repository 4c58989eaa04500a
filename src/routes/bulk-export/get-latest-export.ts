import { latestCompletedExport } from '../../exports/export-repo.js';
import { AppError } from '../../errors/app-error.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';
import { exportRecord, ExportRecord, meta } from './schemas.js';

export function registerGetLatestExport(app: App, deps: Pick<Deps, 'store'>): void {
  app.get(
    '/social/v1/bulk-export/exports/latest',
    {
      schema: {
        operationId: 'getLatestExport',
        tags: ['bulk-export'],
        summary: "The caller's most recently completed export that can still be downloaded.",
        description:
          'Only completed exports whose file is still kept count (one past EXPORT_RETENTION_DAYS has expiredAt set and is left out); 404 not_found until one has completed, or once all have expired. To follow an export you just requested, poll /exports/{id} instead.',
        response: { 200: single(ExportRecord, 'The last completed export that can be downloaded.') },
      },
      config: { errors: ['not_found'] },
    },
    async (request) => {
      const row = await latestCompletedExport(deps.store.db, request.auth!.accountId);
      if (!row) throw new AppError('not_found', 'No export of this account has completed yet, or every completed one has expired (its file removed under the retention policy).');
      return { data: exportRecord(row), meta: meta(request.id) };
    },
  );
}
