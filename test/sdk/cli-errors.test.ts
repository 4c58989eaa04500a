// sdg-client's failures, told right: a key whose secret was lost on the way (revoked, exit 12), a 503
// of the gateway's own (exit 9), a code with terminal escapes written out, a password in --base-url
// never printed, the key from a file or stdin, usage errors as JSON under --json, and an export whose
// wait failed named so it is not made twice.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exitCodes } from '../../sdk/src/cli/exit-codes.js';
import { SdgClient } from '../../sdk/src/index.js';
import type { TestAccount } from '../helpers/harness.js';
import { repoRoot } from '../helpers/processes.js';
import { cli, jsonLines } from './cli-run.js';
import { envelope, LosingProxy, stub } from './faults.js';
import { startGateway, type Gateway } from './gateway.js';

describe('sdg-client failures', () => {
  let g: Gateway;
  let a: TestAccount;
  let proxy: LosingProxy;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    g = await startGateway();
    a = await g.account({ credits: 100_000 });
    proxy = await new LosingProxy(Number(new URL(g.url).port)).start();
    env = { SDG_API_KEY: a.apiKey, SDG_BASE_URL: proxy.url };
    dir = mkdtempSync(join(tmpdir(), 'sdg-client-errors-'));
  });
  after(async () => {
    await proxy.close();
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('keys create whose answer is lost: the replay has no secret, so the key is revoked, said, and exit 12', async () => {
    proxy.drop = (head) => head.startsWith('POST /api/v1/api-keys');
    proxy.lose = 1;
    const r = await cli(['keys', 'create', '--name', 'lost-1'], env);
    assert.equal(r.code, exitCodes.keyLost, r.stderr);
    assert.equal(r.stdout, '', 'no "null" printed as if it were a key');
    const id = /Key (\S+) was created but its secret was lost on the way/.exec(r.stderr)?.[1];
    assert.ok(id, r.stderr);
    assert.match(r.stderr, /it has been revoked\. Run `sdg-client keys create` again/);
    const keys = await new SdgClient({ apiKey: a.apiKey, baseUrl: g.url }).keys().toArray();
    assert.ok(keys.find((k) => k.id === id)?.revokedAt, 'revoked: no active key that nobody holds');

    proxy.lose = 1;
    const asJson = await cli(['keys', 'create', '--name', 'lost-2', '--json'], env);
    assert.equal(asJson.code, exitCodes.keyLost);
    assert.equal(asJson.stdout, '');
    const err = JSON.parse(asJson.stderr) as { error: { code: string; details: { keyId: string; revoked: boolean } }; exitCode: number };
    assert.equal(err.error.code, 'key_secret_lost');
    assert.equal(err.error.details.revoked, true);
    assert.equal(err.exitCode, exitCodes.keyLost);
  });

  test('a 503 of the gateway itself is exit 9; a hostile error code cannot reach the terminal', async () => {
    const s = await stub((req, res) => {
      if (req.url!.startsWith('/api/v1/credits/balance')) return envelope(res, 503, 'service_unavailable', 'The gateway cannot use its storage right now.', undefined, { 'retry-after': '1' });
      envelope(res, 400, 'bad\u001b]0;owned\u0007\u001b[2J', 'hostile\u001b[31m');
    });
    try {
      const [down, hostile] = await Promise.all([cli(['balance', '--max-retries', '0'], { SDG_API_KEY: 'k', SDG_BASE_URL: s.url }), cli(['account'], { SDG_API_KEY: 'k', SDG_BASE_URL: s.url })]);
      assert.equal(down.code, exitCodes.upstream, down.stderr);
      assert.match(down.stderr, /service_unavailable: The gateway cannot use its storage/);
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(hostile.stderr, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      assert.match(hostile.stderr, /bad\\x1b\]0;owned\\x07\\x1b\[2J: hostile\\x1b\[31m/);
    } finally {
      await s.close();
    }
  });

  test('a password in --base-url is never printed; the key can come from a file or stdin', async () => {
    const port = new URL(g.url).port;
    const withPassword = await cli(['balance'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: `http://me:hunter2@127.0.0.1:${port}` });
    assert.equal(withPassword.code, exitCodes.usage);
    assert.doesNotMatch(withPassword.stderr, /hunter2/);
    assert.match(withPassword.stderr, /must not hold a user name or password \(http:\/\/…@127\.0\.0\.1:\d+\)/);
    const keyFile = join(dir, 'key');
    writeFileSync(keyFile, `${a.apiKey}\n`, { mode: 0o600 });
    const [fromFile, fromStdin, both] = await Promise.all([
      cli(['balance', '--json', '--api-key-file', keyFile], { SDG_BASE_URL: g.url }),
      cli(['--api-key-file', '-', 'balance', '--json'], { SDG_BASE_URL: g.url }, { stdin: `${a.apiKey}\n` }),
      cli(['--api-key', 'x', '--api-key-file', keyFile, 'balance'], { SDG_BASE_URL: g.url }),
    ]);
    assert.equal(JSON.parse(fromFile.stdout).accountId, a.accountId, fromFile.stderr);
    assert.equal(JSON.parse(fromStdin.stdout).accountId, a.accountId, fromStdin.stderr);
    assert.equal(both.code, exitCodes.usage);
  });

  test('--version; --file - reads stdin; a usage error under --json is JSON', async () => {
    const version = JSON.parse(readFileSync(join(repoRoot, 'sdk', 'package.json'), 'utf8')).version as string;
    const [v, added, usage] = await Promise.all([
      cli(['--version'], {}),
      cli(['watchlist', 'add', '--file', '-', '--json'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url }, { stdin: `# from a pipe\n${g.sample.usernames[1]}\n` }),
      cli(['timeline', '--json'], env),
    ]);
    assert.equal(v.code, 0);
    assert.equal(v.stdout.trim(), version);
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual(JSON.parse(added.stdout).counts, { added: 1 });
    assert.equal(usage.code, exitCodes.usage);
    assert.deepEqual(JSON.parse(usage.stderr), { error: { code: 'usage', status: null, message: "missing required argument 'user'", details: null, requestId: null }, exitCode: exitCodes.usage });
  });

  test('--max takes a whole number of at least 1 (and --max-retries one of 0 or more): 0, blank, hex and exponents are usage errors, before any paid call', async () => {
    const before = (await new SdgClient({ apiKey: a.apiKey, baseUrl: g.url }).balance()).data.balance;
    for (const max of ['0', '', '0x10', '1e3', '-1', '2.5']) {
      const r = await cli(['exports', 'list', '--max', max, '--json'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url });
      assert.equal(r.code, exitCodes.usage, `--max ${JSON.stringify(max)}: ${r.stderr}`);
      assert.match((JSON.parse(r.stderr) as { error: { message: string } }).error.message, /--max takes a whole number of at least 1/);
    }
    const tweets = await cli(['timeline', g.sample.usernames[0]!, '--max', '0'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url });
    assert.equal(tweets.code, exitCodes.usage, tweets.stderr);
    assert.equal((await new SdgClient({ apiKey: a.apiKey, baseUrl: g.url }).balance()).data.balance, before, 'nothing charged');
    for (const n of ['', '0x10', '1e3', '-1']) {
      const r = await cli(['balance', '--max-retries', n, '--json'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url });
      assert.equal(r.code, exitCodes.usage, `--max-retries ${JSON.stringify(n)}: ${r.stderr}`);
    }
    const one = await cli(['exports', 'list', '--max', '1', '--json'], { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url });
    assert.equal(one.code, 0, one.stderr);
  });

  test('export: when the wait fails, the export already generated is named, with how to get it', async () => {
    const end = new Date();
    const args = ['export', '--start', new Date(end.getTime() - 3_600_000).toISOString(), '--end', end.toISOString(), '-o', join(dir, 'x.jsonl.gz'), '--max-retries', '0'];
    proxy.drop = (head) => /^GET \/social\/v1\/bulk-export\/exports\/\d+ /.test(head);
    proxy.lose = 2;
    const [text, json] = [await cli(args, env), await cli([...args, '--json'], env)];
    proxy.lose = 0;
    assert.equal(text.code, exitCodes.network, text.stderr);
    const id = /export (\d+) was generated; to get it when it completes: sdg-client exports download \1 --wait -o \S+x\.jsonl\.gz/.exec(text.stderr)?.[1];
    assert.ok(id, text.stderr);
    const err = JSON.parse(json.stderr) as { exportId: string; exitCode: number; error: Record<string, unknown> };
    assert.equal(err.exitCode, exitCodes.network);
    // The documented shape, with a snake_case code as the gateway's, for a failure no answer is behind too.
    assert.deepEqual(Object.keys(err.error).slice(0, 5), ['code', 'status', 'message', 'details', 'requestId']);
    assert.equal(err.error.code, 'network_error');
    assert.equal(err.error.status, null);
    assert.deepEqual(Object.keys(err.error.details as object), ['timedOut', 'maybeCharged']);
    const listed = jsonLines((await cli(['exports', 'list', '--json'], env)).stdout).map((e) => e.id);
    assert.ok(listed.includes(id) && listed.includes(err.exportId), `${listed} holds ${id} and ${err.exportId}`);
  });
});
