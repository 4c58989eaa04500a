import { Type } from '@sinclair/typebox';
import { usageCells } from '../../credits/usage-summary.js';
import { isoAtOffset, parseUsageWindow } from '../../credits/usage-window.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

const Count = Type.Object(
  { endpoint: Type.String({ description: "the route's operationId, e.g. getTweet" }), calls: Type.Integer({ description: 'charged calls (not refunded)' }), credits: Type.Integer({ description: 'credits charged (not refunded)' }) },
  { title: 'UsageCount' },
);
const Bucket = Type.Object({
  start: Type.String({ format: 'date-time', description: "in from's offset" }),
  end: Type.String({ format: 'date-time', description: 'exclusive; the last bucket ends at to' }),
  calls: Type.Integer(),
  credits: Type.Integer(),
  endpoints: Type.Array(Count, { description: 'only endpoints with calls in this bucket' }),
}, { title: 'UsageBucket' });
export const UsageSummary = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  granularity: Type.Union([Type.Literal('hour'), Type.Literal('day')]),
  calls: Type.Integer({ description: 'charged calls in the whole window (not refunded)' }),
  credits: Type.Integer({ description: 'credits charged in the whole window (not refunded)' }),
  endpoints: Type.Array(Count, { description: 'totals per endpoint over the window, most credits first' }),
  buckets: Type.Array(Bucket, { description: 'every bucket of the window in order, empty ones included' }),
}, { title: 'UsageSummary' });

const Query = Type.Object(
  {
    from: Type.String({ maxLength: 64, description: 'ISO 8601 with an offset or Z; the first bucket starts here (inclusive)', examples: ['2026-11-20T00:00:00+01:00'] }),
    to: Type.String({
      maxLength: 64,
      description: 'ISO 8601 with an offset or Z, after from (exclusive); at most 31 days after from by hour, 366 by day',
      examples: ['2026-11-27T00:00:00+01:00'],
    }),
    granularity: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], { default: 'day', description: 'the width of a bucket', examples: ['day'] })),
  },
  { additionalProperties: false },
);

export function registerUsageSummary(app: App, deps: Pick<Deps, 'store'>): void {
  app.get(
    '/api/v1/usage/summary',
    {
      schema: {
        operationId: 'getUsageSummary',
        tags: ['account'],
        summary: 'Calls and credits per endpoint per hour or day, summed from the ledger.',
        description:
          'Every bucket of [from, to) in order, empty ones included, with totals per endpoint. Buckets are counted from `from` and labelled in its offset, so asking from a local midnight gives local days. Only charges count (a free call leaves no ledger entry), less those refunded since (a refunded charge is a call answered with a failure), each in its own bucket; grants are not calls.',
        querystring: Query,
        response: { 200: single(UsageSummary, 'Calls and credits per bucket and endpoint.') },
      },
    },
    async (request) => {
      const w = parseUsageWindow(request.query);
      const cells = await usageCells(deps.store, request.auth!.accountId, w);
      const at = (ms: number) => isoAtOffset(ms, w.offsetMinutes);
      const buckets = Array.from({ length: w.buckets }, (_, i) => ({
        start: at(w.fromMs + i * w.bucketMs),
        end: at(Math.min(w.toMs, w.fromMs + (i + 1) * w.bucketMs)),
        calls: 0,
        credits: 0,
        endpoints: [] as { endpoint: string; calls: number; credits: number }[],
      }));
      const totals = new Map<string, { endpoint: string; calls: number; credits: number }>();
      for (const c of cells) {
        const b = buckets[c.bucket];
        if (!b) continue; // cannot happen: the store filtered to [from, to)
        b.calls += c.calls;
        b.credits += c.credits;
        b.endpoints.push({ endpoint: c.endpoint, calls: c.calls, credits: c.credits });
        const t = totals.get(c.endpoint) ?? { endpoint: c.endpoint, calls: 0, credits: 0 };
        t.calls += c.calls;
        t.credits += c.credits;
        totals.set(c.endpoint, t);
      }
      const endpoints = [...totals.values()].sort((a, b) => b.credits - a.credits || a.endpoint.localeCompare(b.endpoint));
      return {
        data: {
          from: at(w.fromMs),
          to: at(w.toMs),
          granularity: w.granularity,
          calls: endpoints.reduce((n, e) => n + e.calls, 0),
          credits: endpoints.reduce((n, e) => n + e.credits, 0),
          endpoints,
          buckets,
        },
        meta: { requestId: request.id, cached: false },
      };
    },
  );
}
