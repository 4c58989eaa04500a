// docs/benchmarks.md is written by `npm run bench`, whose prose section comes from
// bench/where-the-time-goes.md. An edit to one without the other (a finding added between runs)
// would leave the two saying different things.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/processes.js';

test('docs/benchmarks.md carries bench/where-the-time-goes.md as written', () => {
  const doc = readFileSync(join(repoRoot, 'docs/benchmarks.md'), 'utf8');
  const section = readFileSync(join(repoRoot, 'bench/where-the-time-goes.md'), 'utf8').trim();
  assert.ok(section.startsWith('## Where the time goes'), 'the file starts with its heading');
  const at = doc.indexOf('## Where the time goes');
  assert.notEqual(at, -1, 'docs/benchmarks.md has the section');
  const end = doc.indexOf('\n## ', at + 1);
  const scaling = doc.indexOf('<!-- scaling:start -->', at);
  const stop = [end, scaling].filter((i) => i !== -1).reduce((a, b) => Math.min(a, b), doc.length);
  assert.equal(doc.slice(at, stop).trim(), section);
});

// `npm run bench:scaling` replaces what lies between these markers; without them it appends a
// second scaling section (an edit of the prose above once dropped the start marker).
test('docs/benchmarks.md has one scaling section, between its two markers', () => {
  const doc = readFileSync(join(repoRoot, 'docs/benchmarks.md'), 'utf8');
  const count = (s: string) => doc.split(s).length - 1;
  assert.equal(count('<!-- scaling:start -->'), 1);
  assert.equal(count('<!-- scaling:end -->'), 1);
  assert.equal(count('## Scaling: how the costs grow'), 1);
  const start = doc.indexOf('<!-- scaling:start -->');
  assert.ok(start < doc.indexOf('## Scaling: how the costs grow') && doc.indexOf('## Scaling: how the costs grow') < doc.indexOf('<!-- scaling:end -->'));
});
