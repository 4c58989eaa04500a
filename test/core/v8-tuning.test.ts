// Which store turns V8's allocation-site pretenuring off (src/cli/v8-tuning.ts): Postgres only.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { tuneV8ForStore } from '../../src/cli/v8-tuning.js';

function flagsSetFor(env: Record<string, string>): string[] {
  const set: string[] = [];
  tuneV8ForStore(loadConfig({ LOG_LEVEL: 'silent', ...env }), (f) => set.push(f));
  return set;
}

test('on Postgres the server turns allocation-site pretenuring off', () => {
  assert.deepEqual(flagsSetFor({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', REDIS_URL: 'redis://127.0.0.1:6379' }), ['--no-allocation-site-pretenuring']);
});

test('on the embedded store it leaves V8 as started', () => {
  assert.deepEqual(flagsSetFor({ DATA_DIR: '/tmp/sdg-v8-tuning' }), []);
});

test('V8 knows the flag it sets (an unknown one would only print an error and change nothing)', () => {
  const [flag] = flagsSetFor({ DATABASE_URL: 'postgres://u@127.0.0.1:5432/db', REDIS_URL: 'redis://127.0.0.1:6379' });
  const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
});
