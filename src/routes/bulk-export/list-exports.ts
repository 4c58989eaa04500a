import { exportsPage, type ExportPosition } from '../../exports/export-repo.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { keysetPage } from '../../pagination/keyset-page.js';
import { PageQuery, paginated } from '../../http/schemas.js';
import { exportRecord, ExportRecord } from './schemas.js';

export function registerListExports(app: App, deps: Pick<Deps, 'cursors' | 'store'>): void {
  app.get(
    '/social/v1/bulk-export/exports',
    {
      schema: {
        operationId: 'listExports',
        tags: ['bulk-export'],
        summary: "The caller's exports, newest first.",
        description: 'Every export the account requested, in any status, newest first.',
        querystring: PageQuery,
        response: { 200: paginated(ExportRecord, 'One page of exports.') },
      },
      config: { errors: ['invalid_cursor'] },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const list = `exports:${accountId}`;
      const before = request.query.cursor ? deps.cursors.decode<ExportPosition>(list, request.query.cursor) : undefined;
      const rows = await exportsPage(deps.store.db, accountId, limit, before && { createdAt: String(before.createdAt), id: String(before.id) });
      return keysetPage(request, deps.cursors, list, rows, limit, exportRecord, (r) => ({ createdAt: r.created_at, id: r.id }) satisfies ExportPosition);
    },
  );
}
