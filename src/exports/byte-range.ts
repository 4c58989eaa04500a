// Which bytes of an export file a download answers (RFC 9110, section 14), so that an interrupted
// download resumes where it stopped (`curl -C -`, download managers, the SDK) instead of starting over.
// One range at most: a request for several is answered with the whole file, which the RFC allows and
// which spares a multipart body no client of a gzip file needs.
import parseRange from 'range-parser';
import type { ByteRange } from '../objects/object-store.js';

export type RangeChoice = { kind: 'whole' } | { kind: 'part'; range: ByteRange } | { kind: 'unsatisfiable' };

export interface RangeRequest {
  method: string;
  range?: string;
  ifRange?: string;
}

/** The file's validators as sent in ETag and Last-Modified. */
export interface Validators {
  etag: string;
  lastModified: string;
}

export function chooseRange(req: RangeRequest, sizeBytes: number, v: Validators): RangeChoice {
  // Range is defined for GET only; a HEAD answers the whole file's headers.
  if (req.method !== 'GET' || req.range === undefined) return { kind: 'whole' };
  // If-Range: the part only if the file is still the one the client began with, else all of it.
  // Comparison is strong: the ETag as sent (a weak W/ one never matches) or the exact date.
  if (req.ifRange !== undefined && req.ifRange !== v.etag && req.ifRange !== v.lastModified) return { kind: 'whole' };
  // A range whose last position is before its first is invalid (RFC 9110, 14.1.1), so the header is
  // ignored; range-parser calls it unsatisfiable, which is for a valid range outside the file.
  // The unit is compared without regard to case (RFC 9110, 14.1); range-parser takes `bytes` only.
  const header = req.range.replace(/^\s*([A-Za-z]+)\s*=/, (_, unit: string) => `${unit.toLowerCase()}=`);
  const one = /^bytes=(\d+)-(\d+)$/.exec(header.replace(/\s+/g, ''));
  if (one && Number(one[2]) < Number(one[1])) return { kind: 'whole' };
  // The last N bytes of a file shorter than N are the whole file (RFC 9110, 14.1.3), as a part;
  // range-parser calls them unsatisfiable.
  const suffix = /^bytes=-(\d+)$/.exec(header.replace(/\s+/g, ''));
  if (suffix && sizeBytes > 0 && Number(suffix[1]) > sizeBytes) return { kind: 'part', range: { start: 0, end: sizeBytes - 1 } };
  const ranges = parseRange(sizeBytes, header, { combine: true });
  if (ranges === -1) return { kind: 'unsatisfiable' };
  // A malformed header or another unit is ignored, as the RFC says: the whole file.
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return { kind: 'whole' };
  return { kind: 'part', range: { start: ranges[0]!.start, end: ranges[0]!.end } };
}

/**
 * If-None-Match (RFC 9110, 13.1.2): whether it names the file (`*`, or a list holding its ETag,
 * compared weakly: a W/ prefix on either side is ignored), so the answer is 304 with no body.
 */
export function matchesNoneMatch(ifNoneMatch: string | string[] | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return (Array.isArray(ifNoneMatch) ? ifNoneMatch : [ifNoneMatch]).some((v) => v.split(',').some((t) => t.trim() === '*' || opaque(t) === wanted));
}
