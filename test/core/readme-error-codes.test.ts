// The README's table of error codes is the one callers read: it must list every code the gateway
// answers, with the status it answers it with, and no code it does not.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorStatus } from '../../src/errors/app-error.js';
import { repoRoot } from '../helpers/processes.js';

test("the README's error codes are the gateway's, each with its status", () => {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const section = readme.split('\n### Error codes\n')[1]?.split('\n### ')[0];
  assert.ok(section, 'README has a "### Error codes" section');
  const rows = [...section.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
  assert.deepEqual(new Map(rows), new Map(Object.entries(errorStatus)));
  assert.equal(rows.length, Object.keys(errorStatus).length, 'each code once');
});
