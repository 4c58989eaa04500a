// A charged read whose caller closes the connection before the answer is not charged (contract §6:
// charged only when it answers 2xx), on both stores; one the caller waits for is.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { getBalance, ledgerSum } from '../../src/credits/credits-repo.js';
import { SimulatedConditions } from '../../src/sources/simulated.js';
import { backends } from '../helpers/backends.js';
import { startHarness, type Harness } from '../helpers/harness.js';
import { demoNoon, useSource } from '../helpers/social.js';

const LATENCY_MS = 400;

/** Sends GETs on one raw connection (more than one: pipelined) and closes it after `closeAfterMs`, before the answers. */
function leaveEarly(port: number, paths: string[], apiKey: string, closeAfterMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nX-API-Key: ${apiKey}\r\n\r\n`).join(''));
      setTimeout(() => socket.destroy(), closeAfterMs);
    });
    socket.on('data', (d) => (got += String(d)));
    socket.on('error', reject);
    socket.on('close', () => resolve(got));
  });
}

for (const dialect of backends()) {
  describe(`a caller that leaves before a charged read is answered (${dialect})`, () => {
    let h: Harness;
    let port: number;
    let tweetPath: string;
    let tweetIds: string[];
    before(async () => {
      const { demo, sample, clock } = demoNoon();
      // The demo network behind a source that takes LATENCY_MS to answer, as a remote API would.
      h = await startHarness(dialect, {}, useSource(new SimulatedConditions(demo, { latencyMs: LATENCY_MS }), () => clock));
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      port = (h.app.server.address() as { port: number }).port;
      tweetIds = sample.tweetIds;
      tweetPath = `/social/v1/tweets/${tweetIds[0]!}`;
    });
    after(() => h.close());

    test('is not charged, its hold is released, and a 499 is counted; a caller who waits is charged', async () => {
      const a = await h.account({ credits: 150 });
      const got = await leaveEarly(port, [tweetPath], a.apiKey, 50);
      assert.equal(got, '', 'nothing was answered before the caller left');
      // The source answers after LATENCY_MS; the wrapper then finds the caller gone.
      await sleep(LATENCY_MS + 300);
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 150);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 150);
      const metrics = await h.app.inject({ url: '/metrics' });
      assert.match(metrics.body, /sdg_http_requests_total\{[^}]*status="499"[^}]*\} 1/);

      // The hold is gone: 150 credits pay for one 100-credit read, answered and charged.
      const res = await fetch(`http://127.0.0.1:${port}${tweetPath}`, { headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
      assert.equal(res.headers.get('x-credits-charged'), '100');
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 50);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 50);
    });

    test('pipelined reads: the one waiting behind another is not charged either (its answer has no socket yet)', async () => {
      const a = await h.account({ credits: 200 });
      // Tweets not read before (the first test's is stored now, and answered at once).
      const paths = [`/social/v1/tweets/${tweetIds[1]!}`, `/social/v1/tweets/${tweetIds[2]!}`];
      assert.equal(await leaveEarly(port, paths, a.apiKey, 50), '');
      await sleep(LATENCY_MS + 300);
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 200);
      assert.equal(await ledgerSum(h.deps.store.db, a.accountId), 200);
      const metrics = await h.app.inject({ url: '/metrics' });
      assert.match(metrics.body, /sdg_http_requests_total\{[^}]*status="499"[^}]*\} 3/);
      // The tweet answered 200 is the first test's waiting caller's alone.
      const answered = metrics.body.split('\n').filter((l) => l.startsWith('sdg_http_requests_total{') && l.includes('/social/v1/tweets/:id') && l.includes('status="200"'));
      assert.deepEqual(answered.map((l) => l.split(' ').pop()), ['1'], 'neither counted as answered');
    });
  });
}
