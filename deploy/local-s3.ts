// Starts deploy/local-s3.mjs (s3rver behind a front that refuses unsigned requests) as a child
// process, for tests and for deploy/topology.ts.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';

/** s3rver's fixed development credentials. */
export const LOCAL_S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;

/** The settings that point a gateway at a local S3 (credentials for the SDK's default chain). */
export function localS3Env(endpoint: string, bucket: string): Record<string, string> {
  return {
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_REGION: 'us-east-1',
    S3_FORCE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: LOCAL_S3_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_S3_CREDENTIALS.secretAccessKey,
  };
}

export interface LocalS3 {
  /** e.g. http://127.0.0.1:45123 */
  endpoint: string;
  bucket: string;
  pid: number;
  /** What a gateway process needs in its environment to use this bucket. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startLocalS3(opts: { bucket?: string; port?: number; host?: string; dir?: string } = {}): Promise<LocalS3> {
  const args = [resolve(import.meta.dirname, 'local-s3.mjs'), '--port', String(opts.port ?? 0), '--host', opts.host ?? '127.0.0.1', '--bucket', opts.bucket ?? 'exports'];
  if (opts.dir) args.push('--dir', opts.dir);
  // Plain node: no loader inherited from a tsx parent.
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' } });
  const first = await new Promise<string>((res, rej) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once('line', (l) => {
      rl.close();
      res(l);
    });
    child.once('exit', (code) => rej(new Error(`local S3 exited with ${code} before listening`)));
  });
  const { endpoint, bucket } = JSON.parse(first) as { endpoint: string; bucket: string };
  return {
    endpoint,
    bucket,
    pid: child.pid!,
    env: localS3Env(endpoint, bucket),
    close: () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null || child.signalCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
      }),
  };
}
