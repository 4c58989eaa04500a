// Where export files are kept: the local directory (the embedded default) or an S3-compatible bucket
// when S3_BUCKET is set. Credentials are not configuration here: the AWS SDK's default chain finds
// them (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, a profile, an instance role…).
import { ConfigError, bool, optStr, str, url, type Env } from './env.js';

export interface S3Config {
  bucket: string;
  /** MinIO and the like; unset for AWS itself. */
  endpoint: string | undefined;
  region: string;
  /** `endpoint/bucket/key` instead of `bucket.endpoint/key` (MinIO, s3rver). */
  forcePathStyle: boolean;
  /** Presigned download links are signed for this endpoint when clients reach the store by another address. */
  publicEndpoint: string | undefined;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseS3Config(env: Env): S3Config | undefined {
  const bucket = optStr(env, 'S3_BUCKET');
  if (bucket === undefined) {
    // The object store's other settings alone: exports would go to DATA_DIR, silently, and with
    // several machines a link made by one would name a file only it has. (S3_REGION alone is left
    // alone: a host may set it for other programs.)
    const orphan = ['S3_ENDPOINT', 'S3_PUBLIC_ENDPOINT', 'S3_FORCE_PATH_STYLE'].find((name) => optStr(env, name) !== undefined);
    if (orphan) throw new ConfigError(`${orphan} is set but S3_BUCKET is not: set S3_BUCKET to keep exports in that object store, or unset ${orphan} to keep them under DATA_DIR.`);
    return undefined;
  }
  if (!BUCKET.test(bucket)) throw new ConfigError(`S3_BUCKET must be a bucket name (3 to 63 lowercase letters, digits, dots and hyphens); got ${JSON.stringify(bucket)}.`);
  return {
    bucket,
    endpoint: url(env, 'S3_ENDPOINT', ['http', 'https']),
    region: str(env, 'S3_REGION', 'us-east-1'),
    forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
    publicEndpoint: url(env, 'S3_PUBLIC_ENDPOINT', ['http', 'https']),
  };
}
