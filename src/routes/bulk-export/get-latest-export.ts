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
        summary: "The caller's most recently completed export.",
        description: 'Only completed exports count; 404 not_found until one has completed. To follow an export you just requested, poll /exports/{id} instead.',
        response: { 200: single(ExportRecord, 'The last completed export.') },
      },
      config: { errors: ['not_found'] },
    },
    async (request) => {
      const row = await latestCompletedExport(deps.store.db, request.auth!.accountId);
      if (!row) throw new AppError('not_found', 'No export of this account has completed yet.');
      return { data: exportRecord(row), meta: meta(request.id) };
    },
  );
}
