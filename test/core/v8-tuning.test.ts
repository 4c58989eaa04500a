// V8's allocation-site pretenuring, turned off by `sdg serve` on either store (src/cli/v8-tuning.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { tuneV8 } from '../../src/cli/v8-tuning.js';

function flagsSet(): string[] {
  const set: string[] = [];
  tuneV8((f) => set.push(f));
  return set;
}

test('the server turns allocation-site pretenuring off, whatever its store', () => {
  assert.deepEqual(flagsSet(), ['--no-allocation-site-pretenuring']);
});

test('V8 knows the flag it sets (an unknown one would only print an error and change nothing)', () => {
  const [flag] = flagsSet();
  const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], { encoding: 'utf8' });
  assert.equal(r.status, 0);
  assert.equal(r.stderr, '');
});

test('and a misspelt flag is told apart by that check', () => {
  const r = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString('--no-allocation-site-pretenurin')`], { encoding: 'utf8' });
  assert.notEqual(r.stderr, '');
});
