// Where sdg-client writes a list, and how a run cut short is gone on from: the command it prints
// names the filters' exact values (a computed --start-time differs on the next run, and the cursor
// holds them); a cursor the gateway refused is not offered again; an -o that cannot be written is
// refused before anything is paid for; a write that fails part-way (the file-size limit here, as a
// full disk) is a clean error, the file cut back to its whole pages, with the command to go on.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { grant } from '../../src/credits/credits-repo.js';
import { exitCodes } from '../../sdk/src/cli/exit-codes.js';
import { SdgClient } from '../../sdk/src/index.js';
import { cli, jsonLines, printedCommand } from './cli-run.js';
import { startGateway, type Gateway } from './gateway.js';

describe('sdg-client list output', () => {
  let g: Gateway;
  let dir: string;
  before(async () => {
    g = await startGateway();
    dir = mkdtempSync(join(tmpdir(), 'sdg-client-output-'));
  });
  after(async () => {
    await g.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const balanceOf = async (apiKey: string) => (await new SdgClient({ apiKey, baseUrl: g.url }).balance()).data.balance;

  test('a run cut short prints the command with the exact filter values; it goes on; a refused cursor gets no hint', async () => {
    const poor = await g.account({ credits: 200 });
    const env = { SDG_API_KEY: poor.apiKey, SDG_BASE_URL: g.url };
    const file = join(dir, 'computed.jsonl');
    // As `--start-time "$(date …)"` would give: a value of this instant, different on the next run.
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const start = new Date(Date.now() - 10 * 24 * 3_600_000).toISOString();
    const first = await cli(['timeline', g.sample.userIds[4]!, '--start-time', start, '--end-time', end, '-o', file], env);
    assert.equal(first.code, exitCodes.credits, first.stderr);
    const again = printedCommand(first.stderr);
    assert.ok(again, first.stderr);
    assert.deepEqual(again.slice(0, 8), ['timeline', g.sample.userIds[4], '--start-time', start, '--end-time', end, '-o', file]);
    assert.equal(again[8], '--cursor');
    await grant(g.h.deps.store.db, poor.accountId, 10_000, 'top-up');

    // Another --start-time with that cursor: refused (invalid_cursor), and not offered again.
    const later = new Date(Date.parse(start) + 1_000).toISOString();
    const [wrong, wrongJson] = await Promise.all([
      cli(['timeline', g.sample.userIds[4]!, '--start-time', later, '--end-time', end, '--cursor', again[9]!], env),
      cli(['timeline', g.sample.userIds[4]!, '--start-time', later, '--end-time', end, '--cursor', again[9]!, '--json'], env),
    ]);
    assert.equal(wrong.code, exitCodes.usage, wrong.stderr);
    assert.match(wrong.stderr, /invalid_cursor/);
    assert.doesNotMatch(wrong.stderr, /go on from there|run: sdg-client/);
    assert.equal((JSON.parse(wrongJson.stderr) as { nextCursor?: string }).nextCursor, undefined);

    // The printed command, as printed, goes on.
    const rest = await cli(again, env);
    assert.equal(rest.code, 0, rest.stderr);
    const all = jsonLines(readFileSync(file, 'utf8')).map((t) => t.id);
    const whole = await new SdgClient({ apiKey: poor.apiKey, baseUrl: g.url }).userTweets(g.sample.userIds[4]!, { startTime: start, endTime: end }).toArray();
    assert.deepEqual(all, whole.map((t) => t.id), 'every tweet once, in order');
  });

  test('an -o that cannot be written is refused before the @username lookup is paid for', async () => {
    const a = await g.account({ credits: 1_000 });
    const env = { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url };
    const aDir = join(dir, 'a-directory');
    mkdirSync(aDir);
    const [missing, isDir, asJson, exportMissing] = await Promise.all([
      cli(['timeline', `@${g.sample.usernames[0]}`, '-o', join(dir, 'no', 'such', 'dir.jsonl')], env),
      cli(['retweeters', g.sample.tweetIds[0]!, '-o', aDir], env),
      cli(['timeline', `@${g.sample.usernames[0]}`, '-o', join(dir, 'no', 'x.jsonl'), '--json'], env),
      cli(['export', '--start', '2025-06-01T00:00:00Z', '--end', '2025-06-01T01:00:00Z', '-o', join(dir, 'no', 'x.gz')], env),
    ]);
    assert.equal(missing.code, exitCodes.usage, missing.stderr);
    assert.equal(missing.stderr.trim(), `sdg-client: Cannot write -o ${join(dir, 'no', 'such', 'dir.jsonl')}: ENOENT (no such directory).`);
    assert.equal(isDir.code, exitCodes.usage);
    assert.match(isDir.stderr, /EISDIR \(it is a directory\)/);
    const err = JSON.parse(asJson.stderr) as { error: { code: string }; exitCode: number };
    assert.deepEqual([err.error.code, err.exitCode], ['output_unwritable', exitCodes.usage]);
    assert.equal(exportMissing.code, exitCodes.usage, exportMissing.stderr);
    assert.equal(await balanceOf(a.apiKey), 1_000, 'nothing paid for');
    assert.equal((await new SdgClient({ apiKey: a.apiKey, baseUrl: g.url }).exports().toArray()).length, 0, 'no export made');
  });

  test('a write that fails part-way: a clean error, the file holds whole pages, and the printed command goes on', async () => {
    const a = await g.account({ credits: 100_000 });
    const env = { SDG_API_KEY: a.apiKey, SDG_BASE_URL: g.url };
    const userId = g.sample.userIds[4]!;
    // A window of about 260 tweets (hourly), fixed: three pages.
    const end = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const window = ['--start-time', new Date(end.getTime() - 11 * 24 * 3_600_000).toISOString(), '--end-time', end.toISOString()];
    const whole = await new SdgClient({ apiKey: a.apiKey, baseUrl: g.url }).userTweets(userId, { startTime: window[1], endTime: window[3] }).toArray();
    assert.ok(whole.length > 200, `three pages at least: ${whole.length}`);
    const pageBytes = Buffer.byteLength(whole.slice(0, 100).map((t) => `${JSON.stringify(t)}\n`).join(''));
    // The file may grow to a page and a half: the second page's write fails (EFBIG) part-way.
    const limitKb = Math.floor((pageBytes * 1.5) / 1024);
    const file = join(dir, 'limited.jsonl');
    const cut = await cli(['timeline', userId, ...window, '-o', file], env, { shell: `trap '' XFSZ; ulimit -f ${limitKb}` });
    assert.equal(cut.code, exitCodes.failure, cut.stderr);
    assert.match(cut.stderr, new RegExp(`sdg-client: Could not write to ${file.replaceAll('.', '\\.')}: EFBIG`));
    assert.doesNotMatch(cut.stderr, /\n\s+at /, 'no stack');
    assert.match(cut.stderr, /stopped after 100 tweets \(2 pages, 200 credits\); to go on from there, run: sdg-client timeline/);
    assert.equal(readFileSync(file, 'utf8'), whole.slice(0, 100).map((t) => `${JSON.stringify(t)}\n`).join(''), 'cut back to the first page');
    const rest = await cli(printedCommand(cut.stderr)!, env);
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual(jsonLines(readFileSync(file, 'utf8')).map((t) => t.id), whole.map((t) => t.id));
  });
});
