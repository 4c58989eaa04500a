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
  const one = /^bytes=(\d+)-(\d+)$/.exec(req.range.replace(/\s+/g, ''));
  if (one && Number(one[2]) < Number(one[1])) return { kind: 'whole' };
  const ranges = parseRange(sizeBytes, req.range, { combine: true });
  if (ranges === -1) return { kind: 'unsatisfiable' };
  // A malformed header or another unit is ignored, as the RFC says: the whole file.
  if (ranges === -2 || ranges.type !== 'bytes' || ranges.length !== 1) return { kind: 'whole' };
  return { kind: 'part', range: { start: ranges[0]!.start, end: ranges[0]!.end } };
}
