// Request ids are a per-process random prefix and a counter: unique within a process and across processes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { newRequestId } from '../../src/domain/ids.js';
import { repoRoot } from '../helpers/processes.js';

test('request ids never repeat in a process and are URL-safe', () => {
  const ids = Array.from({ length: 50_000 }, () => newRequestId());
  assert.equal(new Set(ids).size, ids.length);
  for (const id of [ids[0]!, ids.at(-1)!]) assert.match(id, /^req_[A-Za-z0-9_-]{12}[0-9a-z]+$/);
});

test('two processes draw different prefixes', () => {
  const draw = () =>
    execFileSync(process.execPath, ['--import', 'tsx', '-e', "import('./src/domain/ids.ts').then((m) => console.log(m.newRequestId()))"], { cwd: repoRoot }).toString().trim();
  const [a, b] = [draw(), draw()];
  assert.match(a, /^req_/);
  assert.notEqual(a.slice(0, 16), b.slice(0, 16));
});
