// Download links of completed exports: served by the gateway itself at a public route, signed with
// HMAC-SHA256 over (export id, object key, expiry). Changing the id, the expiry or the signature
// breaks the signature; the object key is not in the URL at all, so no link can reach another object.
// Signed with the current secret; a link signed with the previous one still works during a rotation.
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

function signature(secret: string, id: string, objectKey: string, expires: number): string {
  return createHmac('sha256', secret).update('export-download\0').update(id).update('\0').update(objectKey).update('\0').update(String(expires)).digest('base64url');
}

/** expires: Unix seconds. */
export function signDownload(secret: string, id: string, objectKey: string, nowMs: number, ttlSeconds: number): SignedLink {
  const expires = Math.floor(nowMs / 1000) + ttlSeconds;
  const sig = signature(secret, id, objectKey, expires);
  return { path: `${DOWNLOAD_PATH}/${id}?expires=${expires}&sig=${sig}`, expires, expiresAt: new Date(expires * 1000).toISOString() };
}

const invalidLink = () => new AppError('not_found', 'This download link is not valid; ask GET /social/v1/bulk-export/exports/{id}/download for a new one.');

/**
 * Throws not_found for a bad signature (without saying whether the export exists) and for an expired
 * link (only once the signature proved the link genuine). A link whose expiry lies further ahead than
 * maxTtlSeconds from now was not made by signDownload with today's settings (a leaked or rotated-in
 * secret, a hand-made link): it is refused like a bad signature, so no link lives forever.
 */
export function verifyDownload(secrets: SigningSecrets, id: string, objectKey: string | undefined, expiresText: string, sig: string, nowMs: number, maxTtlSeconds: number): void {
  if (!objectKey || !/^[0-9]{1,12}$/.test(expiresText) || sig.length > 128) throw invalidLink();
  if (!signedByAny(secrets, sig, (secret) => signature(secret, id, objectKey, Number(expiresText)))) throw invalidLink();
  // One second of slack: signDownload floors the current second.
  if (Number(expiresText) * 1000 > nowMs + (maxTtlSeconds + 1) * 1000) throw invalidLink();
  if (nowMs > Number(expiresText) * 1000) {
    throw new AppError('not_found', 'This download link has expired; ask GET /social/v1/bulk-export/exports/{id}/download for a new one.');
  }
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
