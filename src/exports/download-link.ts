// Download links of completed exports: served by the gateway itself at a public route, signed with
// HMAC-SHA256 over (export id, expiry). Changing the id, the expiry or the signature breaks the
// signature; the object key is not in the URL at all (the route reads it from the export's record),
// so no link can reach another object. The signature is checked before the record is read, so a
// forged link costs the same whether its export exists or not (a review timed the difference when
// the object key was signed too: the record had to be read first). Signed with the current secret;
// a link signed with the previous one still works during a rotation.
import { createHmac } from 'node:crypto';
import { signedByAny, type SigningSecrets } from '../domain/signing-secrets.js';
import { AppError } from '../errors/app-error.js';
import type { ExportRow } from './export-repo.js';

export const DOWNLOAD_PATH = '/downloads/exports';

export interface SignedLink {
  path: string;
  expires: number;
  expiresAt: string;
}

function signature(secret: string, id: string, expires: number): string {
  return createHmac('sha256', secret).update('export-download-v2\0').update(id).update('\0').update(String(expires)).digest('base64url');
}

/** Links made before 2026-12-07 signed the object key too: accepted while one could still be within its TTL (see verifiedDownload). */
function legacySignature(secret: string, id: string, objectKey: string, expires: number): string {
  return createHmac('sha256', secret).update('export-download\0').update(id).update('\0').update(objectKey).update('\0').update(String(expires)).digest('base64url');
}

/** expires: Unix seconds. */
export function signDownload(secret: string, id: string, nowMs: number, ttlSeconds: number): SignedLink {
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  const sig = signature(secret, id, expires);
  return { path: `${DOWNLOAD_PATH}/${id}?expires=${expires}&sig=${sig}`, expires, expiresAt: new Date(expires * 1000).toISOString() };
}

const invalidLink = () => new AppError('not_found', 'This download link is not valid; ask GET /social/v1/bulk-export/exports/{id}/download for a new one.');

/** When this process started: a link signed the old way expires at most a TTL after it (verifiedDownload). */
const STARTED_MS = Date.now();

export interface DownloadCheck {
  id: string;
  expiresText: string;
  sig: string;
  nowMs: number;
  maxTtlSeconds: number;
  /** The export's record (read only once the link is known genuine, or for a link of the old form). */
  find: (id: string) => Promise<ExportRow | undefined>;
  /** Tests: when the process started. */
  startedMs?: number;
}

/**
 * The export a download link names, once the link is proven genuine: throws not_found for a bad
 * signature (without saying whether the export exists) and for an expired link (only once the
 * signature proved the link genuine). A link whose expiry lies further ahead than maxTtlSeconds
 * from now was not made by signDownload with today's settings (a leaked or rotated-in secret, a
 * hand-made link): it is refused like a bad signature, so no link lives forever. Undefined: a
 * genuine link whose export has gone since.
 */
export async function verifiedDownload(secrets: SigningSecrets, c: DownloadCheck): Promise<ExportRow | undefined> {
  const { id, expiresText, sig, nowMs } = c;
  if (!/^[0-9]{1,20}$/.test(id) || !/^[0-9]{1,12}$/.test(expiresText) || sig.length > 128) throw invalidLink();
  const expires = Number(expiresText);
  const genuine = signedByAny(secrets, sig, (secret) => signature(secret, id, expires));
  // The old form, signed by a process before this one (so before it started), expires at most a TTL
  // after that: only then may its record be read to check it; past that, no forged link reads one.
  if (!genuine && expires * 1000 > (c.startedMs ?? STARTED_MS) + (c.maxTtlSeconds + 1) * 1000) throw invalidLink();
  // One second of slack: signDownload floors the current second.
  if (expires * 1000 > nowMs + (c.maxTtlSeconds + 1) * 1000) throw invalidLink();
  let row: ExportRow | undefined;
  if (!genuine) {
    row = await c.find(id);
    const key = row?.status === 'completed' ? row.object_key : undefined;
    if (!key || !signedByAny(secrets, sig, (secret) => legacySignature(secret, id, key, expires))) throw invalidLink();
  }
  if (nowMs > expires * 1000) {
    throw new AppError('not_found', 'This download link has expired; ask GET /social/v1/bulk-export/exports/{id}/download for a new one.');
  }
  return genuine ? c.find(id) : row;
}

/** A completed export whose file is still kept; otherwise export_not_ready or export_expired. */
export function assertDownloadable(row: ExportRow): asserts row is ExportRow & { size_bytes: number; sha256: string } {
  if (row.expired_at !== null) throw exportExpired(row);
  // A failed export never completes: said so, with its reason, rather than "available once it completes".
  if (row.status === 'failed') {
    throw new AppError('export_not_ready', `Export ${row.id} failed and will not complete${row.error ? `: ${row.error}` : '; generate it again.'}`, { status: row.status });
  }
  if (row.status !== 'completed' || row.size_bytes === null || row.sha256 === null) {
    throw new AppError('export_not_ready', `Export ${row.id} is ${row.status}, not completed; a link is available once it completes.`, { status: row.status });
  }
}

export function exportExpired(row: Pick<ExportRow, 'id' | 'expired_at'>): AppError {
  return new AppError(
    'export_expired',
    `Export ${row.id} has expired: its file was removed under the retention policy, and only its record is kept. Generate the export again.`,
    { expiredAt: row.expired_at },
  );
}
