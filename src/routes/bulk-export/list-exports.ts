import { exportsPage, type ExportPosition } from '../../bulk/export-repo.js';
import type { App, Deps } from '../../http/context.js';
import { PageQuery, paginated } from '../../http/schemas.js';
import { exportRecord, ExportRecord } from './schemas.js';

export function registerListExports(app: App, deps: Deps): void {
  app.get(
    '/social/v1/bulk-export/exports',
    {
      schema: {
        operationId: 'listExports',
        tags: ['bulk-export'],
        summary: "The caller's exports, newest first.",
        querystring: PageQuery,
        response: { 200: paginated(ExportRecord) },
      },
    },
    async (request) => {
      const accountId = request.auth!.accountId;
      const limit = request.query.limit ?? 20;
      const list = `exports:${accountId}`;
      const before = request.query.cursor ? deps.cursors.decode<ExportPosition>(list, request.query.cursor) : undefined;
      const rows = await exportsPage(deps.store.db, accountId, limit, before && { createdAt: String(before.createdAt), id: String(before.id) });
      const page = rows.slice(0, limit);
      const hasNextPage = rows.length > limit;
      const last = page[page.length - 1];
      return {
        items: page.map(exportRecord),
        hasNextPage,
        nextCursor: hasNextPage && last ? deps.cursors.encode(list, { createdAt: last.created_at, id: last.id } satisfies ExportPosition) : null,
        requestId: request.id,
        cached: false,
      };
    },
  );
}
