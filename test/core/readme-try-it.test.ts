// The README's examples say what they cost and do what they say: every call in "Try it" to a charged
// endpoint is marked with its cost (the others as free), and the bulk example's "two accounts" are
// two different accounts of the demo sample.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { defaultCosts } from '../../src/config/costs.js';
import { repoRoot } from '../helpers/processes.js';

const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

function section(title: string): string {
  const start = readme.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `README has a section ${title}`);
  const end = readme.indexOf('\n## ', start + 4);
  return readme.slice(start, end < 0 ? undefined : end);
}

// operationId of a path of the Try-it block, enough to look its cost up.
const ROUTES: Array<[RegExp, string]> = [
  [/\/echo\/v1\/hello/, 'echoHello'],
  [/\/api\/v1\/credits\/balance/, 'getCreditsBalance'],
  [/\/social\/v1\/users\/by\/username\//, 'getUserByUsername'],
  [/\/social\/v1\/tweets\/[^/"?]+\/retweeted_by/, 'getRetweeters'],
  [/\/social\/v1\/tweets\//, 'getTweet'],
  [/\/social\/v1\/users\/[^/"?]+\/tweets/, 'getUserTweets'],
  [/\/social\/v1\/communities\//, 'getCommunity'],
  [/\/api\/v1\/usage/, 'listUsage'],
  [/-X POST [^ ]*\/api\/v1\/api-keys/, 'createApiKey'],
  [/\/api\/v1\/api-keys/, 'listApiKeys'],
];

test('"Try it" marks every charged call with its cost, and every other call as free', () => {
  const calls = section('Try it')
    .split('\n')
    .filter((l) => /^curl /.test(l));
  assert.ok(calls.length >= 10);
  let charged = 0;
  for (const line of calls) {
    const op = ROUTES.find(([re]) => re.test(line))?.[1];
    assert.ok(op, `a known endpoint: ${line}`);
    const cost = defaultCosts[op]!;
    const comment = line.slice(line.lastIndexOf('#'));
    assert.ok(line.includes('#'), `a comment on: ${line}`);
    if (cost > 0) {
      charged++;
      assert.match(comment, new RegExp(`\\b${cost} credits\\b`), `${op} costs ${cost}: ${line}`);
    } else assert.match(comment, /\bfree\b/, `${op} is free: ${line}`);
  }
  assert.ok(charged >= 6);
});

test("the bulk example's two accounts are two different accounts", () => {
  const tryIt = section('Try it');
  const bulk = section('Bulk export');
  // NAME=$(… .usernames[0]) / .userIds[1]: the sample's usernames[i] and userIds[i] are one account.
  const index = new Map<string, number>();
  for (const m of tryIt.matchAll(/^(\w+)=\$\(echo "\$SAMPLE" \| node -pe '.*\.(usernames|userIds)\[(\d)\]'\)/gm)) index.set(m[1]!, Number(m[3]));
  const batch = bulk.split('\n').find((l) => l.includes('"items'));
  assert.ok(batch, 'the bulk example adds a batch');
  const vars = [...batch.matchAll(/\$(\w+)\\"/g)].map((m) => m[1]!);
  assert.equal(vars.length, 2, batch);
  const [a, b] = vars.map((v) => index.get(v));
  assert.ok(a !== undefined && b !== undefined, `both come from the demo sample: ${vars.join(', ')}`);
  assert.notEqual(a, b, 'usernames[i] and userIds[i] name the same account: the two indexes must differ');
  const remove = bulk.split('\n').find((l) => l.includes('socialUserIds'));
  const removed = [...(remove ?? '').matchAll(/\$(\w+)\\"/g)].map((m) => m[1]!);
  assert.ok(removed.every((v) => vars.includes(v)), 'the example removes an account it added');
});
