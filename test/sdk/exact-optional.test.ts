// Type-level checks of the package as a user compiles it: its declarations (built here) under
// `exactOptionalPropertyTypes`, where every option must take `undefined` as "not given" (the README
// says so), errors' details typed by code, and createKey's secret typed as possibly null.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { schemaFile } from '../../sdk/scripts/schema-text.js';
import { repoRoot } from '../helpers/processes.js';

const FIXTURE = `
import { isApiError, RateLimitedError, SdgClient, UnavailableError, UpstreamError, type CreatedKey } from '@social-data-gateway/sdk';

declare const client: SdgClient;
const u = undefined;

// Every option of every method takes undefined.
client.userTweets('1', { startTime: u, endTime: u, sinceId: u, untilId: u, limit: u, cursor: u, maxItems: u, signal: u });
client.userTweetsPage('1', { startTime: u, endTime: u, sinceId: u, untilId: u, limit: u, cursor: u }, { signal: u });
client.retweeters('1', { limit: u, cursor: u, maxItems: u, signal: u });
client.retweetersPage('1', { limit: u, cursor: u });
client.usage({ limit: u, cursor: u, maxItems: u });
client.usagePage({ limit: u, cursor: u });
client.keys({ limit: u });
client.watchlist({ limit: u });
client.exports({ limit: u });
client.usageSummary({ from: 'a', to: 'b', granularity: u }, { signal: u });
client.walletBalance('0x0', { chain: u });
client.createKey({ name: u }, { idempotencyKey: u, signal: u });
client.generateExport({ startDate: 'a', endDate: 'b' }, { idempotencyKey: u });
client.waitForExport('1', { onProgress: u, intervalMs: u, timeoutMs: u, signal: u });
client.waitForBatch('1', { onProgress: u, intervalMs: u, timeoutMs: u });
client.downloadExport('1', 'p', { onDownloadProgress: u, resumes: u, continuePart: u, signal: u });
client.exportToFile({ startDate: 'a', endDate: 'b' }, 'p', { onProgress: u, intervalMs: u, timeoutMs: u, idempotencyKey: u, resumes: u, continuePart: u, onDownloadProgress: u });
client.addAllToWatchlist([], { batchSize: u, onProgress: u, intervalMs: u, timeoutMs: u, signal: u });
new SdgClient({ apiKey: 'k', baseUrl: 'http://h', fetch: u, onRetry: u, timeoutMs: u, retry: { maxRetries: u, baseDelayMs: u, maxDelayMs: u, jitter: u, statuses: u, retryCharged: u } });
// @ts-expect-error: a required value stays required
client.usageSummary({ from: u, to: 'b' });

// Details typed by code.
declare const e: unknown;
if (isApiError(e, 'export_not_ready')) {
  const status: string | undefined = e.details?.status;
}
if (isApiError(e, 'key_limit_reached')) {
  const n: number | undefined = e.details?.limit;
  const active: number | undefined = e.details?.active;
}
if (isApiError(e, 'export_expired')) {
  const at: string | undefined = e.details?.expiredAt;
}
if (isApiError(e, 'insufficient_credits')) {
  const required: number | undefined = e.required;
  // @ts-expect-error: a 402 without details has none
  const sure: number = e.balance;
}
if (e instanceof RateLimitedError) {
  const scope: 'key' | 'account' | 'ip' | undefined = e.scope;
  // @ts-expect-error: one of three
  if (e.scope === 'galaxy') throw e;
}
if (e instanceof UpstreamError || e instanceof UnavailableError) {
  const after: number | undefined = e.retryAfterSeconds;
}

// createKey's secret: null on a replay.
declare const k: CreatedKey;
if (k.replayed) {
  const none: null = k.data.key;
} else {
  const secret: string = k.data.key;
}
// @ts-expect-error: it may be null
const always: string = k.data.key;
`;

function run(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })));
}

describe('the package under exactOptionalPropertyTypes', () => {
  test('every option takes undefined; details, scope and the key secret are typed', async () => {
    // Inside sdk/ so that the declarations find openapi-fetch as an installed package would.
    const dir = mkdtempSync(join(repoRoot, 'sdk', '.tmp-types-'));
    try {
      const tsc = join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc');
      const built = await run([tsc, '-p', 'sdk', '--outDir', join(dir, 'dist'), '--emitDeclarationOnly']);
      assert.equal(built.code, 0, built.out);
      copyFileSync(schemaFile, join(dir, 'dist', 'schema.d.ts'));
      writeFileSync(join(dir, 'fixture.ts'), FIXTURE);
      const compilerOptions = {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        types: ['node'],
        typeRoots: [join(repoRoot, 'node_modules', '@types')],
        strict: true,
        exactOptionalPropertyTypes: true,
        noEmit: true,
        skipLibCheck: false,
        paths: { '@social-data-gateway/sdk': [join(dir, 'dist', 'index.d.ts')] },
      };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: [join(dir, 'fixture.ts')] }));
      const r = await run([tsc, '-p', join(dir, 'tsconfig.json')]);
      assert.equal(r.code, 0, r.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
