// Picks the object store from configuration: an S3-compatible bucket when S3_BUCKET is set, else the
// local directory. The AWS SDK is imported only when S3 is configured, so the embedded default's
// heap holds none of it.
import type { Config } from '../config/config.js';
import { LocalObjectStore } from './local-object-store.js';
import type { ObjectStore } from './object-store.js';

export async function buildObjectStore(config: Pick<Config, 'exports'>): Promise<ObjectStore> {
  const s3 = config.exports.s3;
  if (!s3) return new LocalObjectStore(config.exports.dir);
  const { S3ObjectStore } = await import('./s3-object-store.js');
  return new S3ObjectStore(s3);
}
