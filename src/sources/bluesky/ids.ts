// Numeric ids for Bluesky's DIDs and post URIs. The contract's ids are decimal strings; Bluesky names
// accounts by DID and posts by at:// URI, so the gateway mints numbers and keeps the mapping (id-map.ts).
//
// Post ids are time-ordered snowflakes, positive and below 2^63 (at most 19 digits):
//   id = (milliseconds since 1970, 42 bits: until 2109) << 21 | tie (21 bits)
// The time is the post's sort time (see postSortMs) when the post itself was seen, else the time in
// its record key (a TID), else the time of the post that referred to it. The tie bits come from the
// post's CID, in the AppView's own tie order (it sorts equal times by CID, descending, as text), so
// "newest first by (createdAt, id)" is the AppView's order; without a CID, from a hash of the URI.
// A collision (another URI already holds the value) takes the next value: see id-map.ts.
//
// User ids are any stable positive 63-bit number: the first 63 bits of SHA-256(DID), next value on
// collision. They are not time-ordered.
import { createHash } from 'node:crypto';

export const TIME_SHIFT = 21n;
const TIE_MASK = (1n << TIME_SHIFT) - 1n;
const MAX_MS = (1n << 42n) - 1n;
const MAX_ID = (1n << 63n) - 1n;

export interface AtUri {
  did: string;
  collection: string;
  rkey: string;
}

const AT_URI = /^at:\/\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)$/;

/** `at://did/collection/rkey`, or undefined for anything else. */
export function parseAtUri(uri: string): AtUri | undefined {
  const m = AT_URI.exec(uri);
  return m ? { did: m[1]!, collection: m[2]!, rkey: m[3]! } : undefined;
}

export const POST_COLLECTION = 'app.bsky.feed.post';

export function isPostUri(uri: string): boolean {
  return parseAtUri(uri)?.collection === POST_COLLECTION;
}

// base32-sortable, the alphabet of TIDs: 53 bits of microseconds since 1970, then a 10-bit clock id.
const S32 = '234567abcdefghijklmnopqrstuvwxyz';
const TID = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

/** The time (ms) in a TID record key, or undefined when the key is not a TID. */
export function tidMs(rkey: string): number | undefined {
  if (!TID.test(rkey)) return undefined;
  let value = 0n;
  for (const ch of rkey) value = value * 32n + BigInt(S32.indexOf(ch));
  return Number((value >> 10n) / 1000n);
}

// CIDs are compared by the AppView as text; ranking each character by its code keeps that order.
const CID_RANK = [...'234567abcdefghijklmnopqrstuvwxyz'].sort();
const CID_BODY = /^b(?:afyrei|afkrei)?([a-z2-7]{4})/;

/** 21 tie bits, non-decreasing in the CID's text order among CIDs of the same kind; undefined if not a base32 CID. */
export function tieFromCid(cid: string): bigint | undefined {
  const m = CID_BODY.exec(cid);
  if (!m) return undefined;
  let bits = 0n;
  for (const ch of m[1]!) bits = bits * 32n + BigInt(CID_RANK.indexOf(ch));
  return bits << 1n;
}

export function tieFromUri(uri: string): bigint {
  return BigInt(`0x${createHash('sha256').update(uri).digest('hex').slice(0, 8)}`) & TIE_MASK;
}

/** The candidate id of a post, before collisions: `attempt` 0, 1, 2… are tried in turn. */
export function postIdCandidate(atMs: number, tie: bigint, attempt: number): string {
  const ms = BigInt(Math.max(0, Math.trunc(Number.isFinite(atMs) ? atMs : 0)));
  const id = ((ms > MAX_MS ? MAX_MS : ms) << TIME_SHIFT) + (tie & TIE_MASK) + BigInt(attempt);
  return (id < 1n ? 1n : id > MAX_ID ? MAX_ID - BigInt(attempt) : id).toString();
}

/** The time part of a post id (ms since 1970); undefined for something that is not a decimal id. */
export function postIdMs(id: string): number | undefined {
  if (!/^[0-9]{1,19}$/.test(id)) return undefined;
  return Number(BigInt(id) >> TIME_SHIFT);
}

/** The candidate id of a user, before collisions. */
export function userIdCandidate(did: string, attempt: number): string {
  const base = BigInt(`0x${createHash('sha256').update(did).digest('hex').slice(0, 16)}`) & MAX_ID;
  const id = (base + BigInt(attempt)) % MAX_ID;
  return (id === 0n ? 1n : id).toString();
}

export function compareIds(a: string, b: string): number {
  return a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0;
}
