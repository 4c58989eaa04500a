import { Type } from '@sinclair/typebox';
import { parseExportRange } from '../../domain/dates.js';
import { createExport } from '../../exports/export-repo.js';
import { newExportId } from '../../domain/record-ids.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';
import { exportRecord, ExportRecord, meta } from './schemas.js';

// The dates are checked by the handler, not by a schema format or length, so that any string that is
// not a date (an empty or overlong one too) is invalid_date_range (docs/spec/contract.md, section 5)
// rather than invalid_request. The body's size limit bounds them; the check is one anchored regex.
const DateText = (example: string) => Type.String({ description: 'ISO 8601 date-time with an offset or Z', examples: [example] });

export const GenerateExportBody = Type.Object(
  {
    startDate: DateText('2025-01-31T00:00:00Z'),
    endDate: DateText('2025-02-01T00:00:00Z'),
  },
  { additionalProperties: false, examples: [{ startDate: '2025-01-31T00:00:00Z', endDate: '2025-02-01T00:00:00Z' }] },
);

export function registerGenerateExport(app: App, deps: Pick<Deps, 'bulk' | 'config' | 'store'>): void {
  app.post(
    '/social/v1/bulk-export/exports/generate',
    {
      schema: {
        operationId: 'generateExport',
        tags: ['bulk-export'],
        summary: "Requests an export of the tweets created in [startDate, endDate) (at most 24 h) by the accounts on the caller's watchlist.",
        description:
          'The export is written in the background as gzip JSON Lines, one Tweet per line, oldest first. Poll GET /social/v1/bulk-export/exports/{id} until its status is completed (or failed), then ask /exports/{id}/download for a link. A malformed date, endDate not after startDate, or a range over 24 h is 400 invalid_date_range. An account may have a limited number of unfinished exports (MAX_OPEN_EXPORTS_PER_ACCOUNT, default 5); beyond it the answer is 409 open_jobs_limit_reached, not charged.',
        body: GenerateExportBody,
        response: { 202: single(ExportRecord, 'The export, queued.') },
      },
      config: { errors: ['invalid_date_range', 'open_jobs_limit_reached'] },
    },
    async (request, reply) => {
      const range = parseExportRange(request.body.startDate, request.body.endDate);
      const now = deps.bulk.clock();
      const row = await createExport(deps.store.db, {
        id: newExportId(now.getTime()),
        accountId: request.auth!.accountId,
        start: range.start,
        end: range.end,
        now: now.toISOString(),
      }, deps.config.quotas.openExportsPerAccount);
      deps.bulk.wakeups.notify();
      reply.code(202);
      return { data: exportRecord(row), meta: meta(request.id) };
    },
  );
}
