// deploy/compose.yaml (not run here: this host has no Docker) names the same roles and settings as
// deploy/topology.ts, which the topology test runs: two API processes with ROLES=api behind the
// proxy, a worker, the scheduler, and every program container's environment is a valid
// configuration on Postgres, Redis and S3.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import { localS3Env } from '../../deploy/local-s3.js';
import { sharedEnv } from '../../deploy/topology.js';
import { repoRoot } from '../helpers/processes.js';
import { SERVER_FLAGS } from '../../bench/shipped-flags.js';
import { DRAIN_LIMIT_MS } from '../../src/cli/serve.js';
import { STOP_TIMEOUT_MS } from '../../src/cli/cluster.js';

interface Service {
  image?: string;
  stop_grace_period?: string;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
}
const compose = parse(readFileSync(join(repoRoot, 'deploy/compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const programs = Object.entries(services).filter(([, s]) => s.image === 'social-data-gateway:local');

test('compose.yaml: Postgres, Redis, MinIO, two API gateways, a worker, the scheduler and a Caddy proxy in front of the gateways', () => {
  assert.match(services.postgres?.image ?? '', /^postgres:/);
  assert.match(services.redis?.image ?? '', /^redis:/);
  assert.match(services.minio?.image ?? '', /^minio\/minio/);
  assert.match(services.proxy?.image ?? '', /^caddy:/);
  const apis = programs.filter(([, s]) => s.command?.[0] === 'serve');
  assert.deepEqual(apis.map(([n]) => n).sort(), ['gateway-1', 'gateway-2']);
  for (const [, s] of apis) assert.equal(s.environment?.ROLES, 'api');
  assert.deepEqual(programs.filter(([, s]) => s.command?.[0] === 'worker').length, 1);
  assert.deepEqual(programs.filter(([, s]) => s.command?.[0] === 'scheduler').length, 1);
  // Schema first, once.
  assert.ok(programs.some(([n, s]) => n === 'migrate' && s.command?.[0] === 'migrate'));
  for (const [n, s] of programs.filter(([n]) => n !== 'migrate')) {
    assert.deepEqual((s.depends_on as Record<string, { condition: string }>).migrate, { condition: 'service_completed_successfully' }, n);
  }
  const caddy = readFileSync(join(repoRoot, 'deploy/Caddyfile'), 'utf8');
  assert.match(caddy, /reverse_proxy gateway-1:8080 gateway-2:8080/);
});

test('every program container has the settings the Docker-less topology gives its processes, and they parse', () => {
  const names = Object.keys(sharedEnv({ databaseUrl: 'postgres://x/y', redisUrl: 'redis://x' }, localS3Env('http://127.0.0.1:1', 'exports')));
  for (const [n, s] of programs) {
    const env = s.environment ?? {};
    for (const v of names) assert.ok(v in env, `${n} sets ${v}`);
    const c = loadConfig({ ...env });
    assert.ok(c.databaseUrl?.startsWith('postgres://'), n);
    assert.ok(c.redisUrl?.startsWith('redis://'), n);
    assert.equal(c.exports.s3?.bucket, 'exports', n);
    assert.equal(c.exports.s3?.endpoint, 'http://minio:9000', n);
    assert.equal(c.exports.s3?.forcePathStyle, true, n);
    assert.equal(c.exports.retentionDays, 7, n);
    if (env.ROLES) assert.deepEqual(c.roles, ['api'], n);
    // The worker and the scheduler serve their health and metrics on a port of their own.
    if (s.command?.[0] === 'worker' || s.command?.[0] === 'scheduler') assert.equal(c.metricsPort, 9090, n);
  }
});

test("the image's entry point runs the server with the Node flags `npm start` gives it", () => {
  const dockerfile = readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8');
  const entry = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1] ?? '[]') as string[];
  assert.deepEqual(entry, ['node', ...SERVER_FLAGS, 'dist/src/cli/main.js']);
});

test('docker stop waits out the programs\' own shutdown limits before its SIGKILL', () => {
  for (const [n, s] of programs) {
    const m = /^(\d+)s$/.exec(s.stop_grace_period ?? '');
    assert.ok(m, `${n} sets stop_grace_period in seconds (Docker's default, 10 s, is shorter than the drain)`);
    assert.ok(Number(m[1]) * 1000 > Math.max(DRAIN_LIMIT_MS, STOP_TIMEOUT_MS), `${n}: ${s.stop_grace_period}`);
  }
});
