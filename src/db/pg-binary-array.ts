// One-dimensional arrays in Postgres's binary format (what `array_recv` reads), for statements
// whose parameters are long arrays. pg sends a Buffer parameter in the binary format as it is;
// given a JavaScript array, it writes an array literal instead, quoting and escaping every element
// with regular expressions, and Postgres parses that literal back (`array_in`). The group charge
// sends six arrays of a few dozen elements each: see bench/where-the-time-goes.md, 2026-11-29.
//
// Layout: ndim, has-nulls flag, element type OID, then per dimension its length and lower bound;
// then each element as its byte length (-1 for null) and its bytes. All integers big-endian.

const HEADER = 20;
/** pg_type OIDs of the element types (stable across Postgres versions). */
const TEXT_OID = 25;
const INT8_OID = 20;
const TWO_32 = 4294967296;

function writeHeader(out: Buffer, hasNulls: boolean, elementOid: number, length: number): void {
  out.writeInt32BE(1, 0);
  out.writeInt32BE(hasNulls ? 1 : 0, 4);
  out.writeInt32BE(elementOid, 8);
  out.writeInt32BE(length, 12);
  out.writeInt32BE(1, 16);
}

/**
 * A `text[]` parameter; null elements allowed. One pass: the buffer is sized for the worst case (3
 * bytes of UTF-8 per UTF-16 unit) and each element's ASCII characters are copied in JavaScript; an
 * element with any other character is written again by Buffer.write. The group charge's elements
 * (ids, request ids, endpoints) are short and ASCII, where two native calls an element (byteLength,
 * write) cost about twice the copy: 5 µs against 9 to 12 for a group of 25 charges.
 */
export function textArray(values: ReadonlyArray<string | null>): Buffer {
  let bound = HEADER + 4 * values.length;
  let hasNulls = false;
  for (const v of values) {
    if (v === null) hasNulls = true;
    else bound += 3 * v.length;
  }
  const out = Buffer.allocUnsafe(bound);
  writeHeader(out, hasNulls, TEXT_OID, values.length);
  let at = HEADER;
  for (const v of values) {
    if (v === null) {
      out.writeInt32BE(-1, at);
      at += 4;
      continue;
    }
    const n = v.length;
    let i = 0;
    for (; i < n; i++) {
      const c = v.charCodeAt(i);
      if (c > 0x7f) break;
      out[at + 4 + i] = c;
    }
    const bytes = i === n ? n : out.write(v, at + 4);
    out.writeInt32BE(bytes, at);
    at += 4 + bytes;
  }
  return out.subarray(0, at);
}

/** A `bigint[]` parameter of safe integers (a fraction or beyond 2^53 is a caller's bug: thrown). */
export function int8Array(values: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(HEADER + 12 * values.length);
  writeHeader(out, false, INT8_OID, values.length);
  let at = HEADER;
  for (const v of values) {
    if (!Number.isSafeInteger(v)) throw new RangeError(`not a safe integer for a bigint[]: ${v}`);
    out.writeInt32BE(8, at);
    // Two's complement in two words: the high word is the floor of v / 2^32, the low its remainder.
    out.writeInt32BE(Math.floor(v / TWO_32), at + 4);
    out.writeUInt32BE(v >>> 0, at + 8);
    at += 12;
  }
  return out;
}
