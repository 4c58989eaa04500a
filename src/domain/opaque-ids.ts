// Public ids for rows whose store id is a sequence (ledger entries): the sequence number encrypted
// (AES on one 16-byte block, a keyed permutation), so an answer reveals neither the order of entries
// across tenants nor the platform's volume, and the service can still turn a public id back into its
// position for keyset pages. The key was first derived from the service secret; it is kept in the
// store since, so that an id stays the same when the secret changes (wiring/secret.ts).
import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';

export class OpaqueIds {
  constructor(
    private readonly key: Buffer,
    private readonly prefix: string,
  ) {
    if (key.length !== 16) throw new Error(`an opaque-id key is 16 bytes, not ${key.length}`);
  }

  /** The key of a prefix's ids derived from a secret (how every key was made before keys were stored). */
  static keyFrom(secret: string, prefix: string): Buffer {
    return createHash('sha256').update('opaque-id\0').update(prefix).update('\0').update(secret).digest().subarray(0, 16);
  }

  encode(n: number): string {
    const block = Buffer.alloc(16);
    block.writeBigUInt64BE(BigInt(n), 8);
    const c = createCipheriv('aes-128-ecb', this.key, null).setAutoPadding(false);
    return `${this.prefix}_${Buffer.concat([c.update(block), c.final()]).toString('base64url')}`;
  }

  /** The sequence number of a public id made by encode, or undefined for anything else. */
  decode(id: string): number | undefined {
    if (!id.startsWith(`${this.prefix}_`)) return undefined;
    const raw = Buffer.from(id.slice(this.prefix.length + 1), 'base64url');
    if (raw.length !== 16) return undefined;
    const d = createDecipheriv('aes-128-ecb', this.key, null).setAutoPadding(false);
    const block = Buffer.concat([d.update(raw), d.final()]);
    // The first 8 bytes are zero in every id we made: anything else was not made here.
    if (block.readBigUInt64BE(0) !== 0n) return undefined;
    const n = block.readBigUInt64BE(8);
    return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : undefined;
  }
}
