// The object store on an S3-compatible bucket (AWS S3, MinIO, …), for deployments of several
// processes on several machines. A put streams through lib-storage's multipart Upload: parts of
// PART_SIZE bytes, QUEUE_SIZE of them in flight, so memory stays flat whatever the object's size.
// S3 makes an object visible only when its single PUT or CompleteMultipartUpload succeeds, which
// gives the interface's atomic put; a failed Upload aborts its multipart upload. Parts left by a
// process killed mid-upload are not visible objects; a bucket lifecycle rule
// (AbortIncompleteMultipartUpload) reclaims them (deploy/README.md).
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { S3Config } from '../config/object-storage.js';
import { markObjectStoreError } from '../errors/store-unavailable.js';
import { assertValidKey, type ByteRange, type ObjectBody, type ObjectInfo, type ObjectStore, type PresignOptions, type PresignedUrl } from './object-store.js';

/** S3's minimum part size; with QUEUE_SIZE parts in flight an upload buffers about 20 MiB. */
const PART_SIZE = 5 * 1024 * 1024;
const QUEUE_SIZE = 4;

/**
 * A request to the store gives up after this long without a byte moving (and a connection after
 * CONNECT_TIMEOUT_MS): without it, an export's upload to a store cut off by a network partition
 * stayed `running` for as long as the partition lasted, and its worker said nothing.
 */
const SOCKET_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 5_000;

export interface S3ObjectStoreOptions extends S3Config {
  /** Tests only: explicit credentials instead of the SDK's default chain. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Tests only: SOCKET_TIMEOUT_MS. */
  socketTimeoutMs?: number;
}

function client(o: S3ObjectStoreOptions, endpoint: string | undefined): S3Client {
  const s3 = new S3Client({
    region: o.region,
    ...(endpoint ? { endpoint } : {}),
    forcePathStyle: o.forcePathStyle,
    ...(o.credentials ? { credentials: o.credentials } : {}),
    // Checksums only where the API requires them: S3-compatible stores (older MinIO, s3rver) reject
    // the flexible-checksum trailers the SDK adds by default.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: o.socketTimeoutMs ?? SOCKET_TIMEOUT_MS },
  });
  // Every failure of a call (after the SDK's retries, uploads' parts included) is marked as the
  // object store's: its ECONNREFUSED is not the database's (isStoreUnavailable).
  s3.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (err) {
        throw markObjectStoreError(err);
      }
    },
    { step: 'initialize', name: 'sdgObjectStoreErrors' },
  );
  return s3;
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.name === 'NotFound' || err.name === 'NoSuchKey' || err.$metadata.httpStatusCode === 404);
}

/** What went wrong with a call to the bucket, in words an operator can act on. */
function s3Problem(err: unknown): string {
  if (err instanceof S3ServiceException) {
    const status = err.$metadata.httpStatusCode;
    if (status === 404) return 'no such bucket (create it, or fix S3_BUCKET)';
    if (status === 403) return `access refused (${err.name}, HTTP 403): check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and that they may write and delete objects in the bucket`;
    if (status === 301) {
      // AWS names the bucket's region in a header of its answer.
      const region = err.$response?.headers['x-amz-bucket-region'];
      return `the bucket is in another region${region ? `, ${region}` : ''} (fix S3_REGION)`;
    }
    return `${err.name} (HTTP ${status ?? '?'})`;
  }
  const e = err as { code?: string; name?: string; message?: string };
  if (e.name === 'CredentialsProviderError') return 'no credentials (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or another source of the AWS SDK\'s default chain)';
  if (e.code) return `does not answer (${e.code}): start it, or fix S3_ENDPOINT`;
  return e.message ?? String(err);
}

export class S3ObjectStore implements ObjectStore {
  private readonly s3: S3Client;
  /** Signs download links for the address clients use, which may differ from the one servers use. */
  private readonly signer: S3Client;
  readonly bucket: string;
  private readonly endpoint: string | undefined;

  constructor(o: S3ObjectStoreOptions) {
    this.bucket = o.bucket;
    this.endpoint = o.endpoint;
    this.s3 = client(o, o.endpoint);
    this.signer = o.publicEndpoint ? client(o, o.publicEndpoint) : this.s3;
  }

  async put(key: string, body: ObjectBody): Promise<ObjectInfo> {
    assertValidKey(key);
    const stream: Readable = 'path' in body ? createReadStream(body.path) : body;
    const upload = new Upload({
      client: this.s3,
      params: { Bucket: this.bucket, Key: key, Body: stream, ContentType: 'application/gzip' },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    // A body that errors (an aborted export) fails done(), which aborts the multipart upload. If the
    // abort itself fails (a store without AbortMultipartUpload), the body's error is still the cause.
    let bodyError: unknown;
    const onError = (err: unknown) => (bodyError ??= err);
    stream.once('error', onError);
    try {
      await upload.done();
    } catch (err) {
      throw bodyError ?? err;
    } finally {
      stream.off('error', onError);
    }
    const info = await this.stat(key);
    if (!info) throw new Error(`Object ${key} vanished right after it was stored.`);
    return info;
  }

  async stat(key: string): Promise<ObjectInfo | undefined> {
    assertValidKey(key);
    try {
      const h = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { key, sizeBytes: Number(h.ContentLength ?? 0), modifiedAt: h.LastModified ?? new Date(0) };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  createReadStream(key: string, range?: ByteRange): Readable {
    assertValidKey(key);
    const s3 = this.s3;
    const bucket = this.bucket;
    return Readable.from(
      (async function* () {
        const r = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }));
        if (!r.Body) return;
        yield* r.Body as Readable;
      })(),
      { objectMode: false },
    );
  }

  async delete(key: string): Promise<void> {
    assertValidKey(key);
    try {
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  async presignGet(key: string, opts: PresignOptions): Promise<PresignedUrl> {
    assertValidKey(key);
    // Signed as of `now` (the service's clock), so the URL's expiry and expiresAt are one instant.
    const signingDate = new Date(Math.floor(opts.now.getTime() / 1000) * 1000);
    const url = await getSignedUrl(
      this.signer,
      new GetObjectCommand({ Bucket: this.bucket, Key: key, ResponseContentDisposition: `attachment; filename="${opts.filename}"`, ResponseCacheControl: 'private, no-store' }),
      { expiresIn: opts.ttlSeconds, signingDate },
    );
    return { url, expiresAt: new Date(signingDate.getTime() + opts.ttlSeconds * 1000).toISOString() };
  }

  async check(): Promise<void> {
    const where = `S3 bucket ${this.bucket}${this.endpoint ? ` at ${this.endpoint}` : ''}`;
    // An empty object written and deleted: what exports and retention do, with the permissions they
    // need (HeadBucket would need s3:ListBucket, which they do not).
    const key = `sdg-check/${randomBytes(8).toString('hex')}`;
    try {
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: Buffer.alloc(0) }));
      await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    } catch (err) {
      throw new Error(`${where}: ${s3Problem(err)}`, { cause: err });
    }
  }

  close(): void {
    this.s3.destroy();
    if (this.signer !== this.s3) this.signer.destroy();
  }
}
