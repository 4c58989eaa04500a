// Every environment variable the configuration reads is named in a row of the README's settings
// tables, so an operator finds each knob where the others are.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/processes.js';

test('the README names every variable src/config reads, in a table row of its own or shared', () => {
  const dir = join(repoRoot, 'src', 'config');
  const read = new Set<string>();
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/\(env, '([A-Z][A-Z0-9_]+)'/g)) read.add(m[1]!);
  }
  assert.ok(read.size >= 50, `${read.size} variables found: the pattern still matches how config.ts reads them`);
  const named = new Set<string>();
  for (const line of readFileSync(join(repoRoot, 'README.md'), 'utf8').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const first = line.split('|')[1]!;
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) named.add(m[1]!);
  }
  assert.deepEqual([...read].filter((v) => !named.has(v)).sort(), []);
});
