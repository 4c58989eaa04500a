import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, createTestStore, type TestStore } from '../helpers/backends.js';
import { runSdg, startServer, type ServerProcess } from '../helpers/processes.js';

for (const backend of backends()) {
  describe(`sdg command line (${backend})`, () => {
    let ts: TestStore;
    let server: ServerProcess;
    before(async () => {
      ts = await createTestStore(backend);
      await ts.store.close();
      server = await startServer({ ...ts.env, ROLES: 'api' });
    });
    after(async () => {
      assert.equal(await server.stop('SIGTERM'), 0, 'SIGTERM shuts down cleanly');
      await ts.dispose();
    });

    test('migrate, accounts create/list, credits grant and keys revoke, while the server runs', async () => {
      const m = await runSdg(['migrate', '--json'], ts.env);
      assert.equal(m.code, 0, m.stderr);
      assert.deepEqual(JSON.parse(m.stdout), { applied: [] }, 'the server already migrated');

      const c = await runSdg(['accounts', 'create', '--name', 'Ada', '--credits', '250', '--json'], ts.env);
      assert.equal(c.code, 0, c.stderr);
      const { accountId, apiKey } = JSON.parse(c.stdout) as { accountId: string; apiKey: string };
      assert.match(accountId, /^acc_/);
      assert.match(apiKey, /^sdg_live_/);

      const bal = await fetch(`${server.url}/api/v1/credits/balance`, { headers: { 'x-api-key': apiKey } });
      assert.equal(bal.status, 200);
      assert.equal(((await bal.json()) as { data: { balance: number } }).data.balance, 250);

      const g = await runSdg(['credits', 'grant', accountId, '50', '--json'], ts.env);
      assert.equal(g.code, 0, g.stderr);
      assert.deepEqual(JSON.parse(g.stdout), { accountId, balance: 300 });

      const l = await runSdg(['accounts', 'list', '--json'], ts.env);
      const list = JSON.parse(l.stdout) as Array<{ accountId: string; balance: number; planId: string }>;
      assert.deepEqual(list.find((a) => a.accountId === accountId), { ...list.find((a) => a.accountId === accountId), balance: 300, planId: 'free' });

      const keys = await fetch(`${server.url}/api/v1/api-keys`, { headers: { 'x-api-key': apiKey } }).then((r) => r.json() as Promise<{ items: Array<{ id: string }> }>);
      const keyId = keys.items[0]!.id;
      const r = await runSdg(['keys', 'revoke', keyId, '--json'], ts.env);
      assert.equal(r.code, 0, r.stderr);
      const first = JSON.parse(r.stdout) as { keyId: string; revokedAt: string; alreadyRevoked: boolean };
      assert.equal(first.keyId, keyId);
      assert.equal(first.alreadyRevoked, false);
      const denied = await fetch(`${server.url}/echo/v1/hello`, { headers: { 'x-api-key': apiKey } });
      assert.equal(denied.status, 401);
      // A second revoke changes nothing and says so, with the first one's time.
      const again = await runSdg(['keys', 'revoke', keyId], ts.env);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.stdout, `${keyId} was already revoked at ${first.revokedAt}\n`);
    });

    test('plan and rate-limit options; bad input exits 2 with a message', async () => {
      const c = await runSdg(['accounts', 'create', '--name', 'Bo', '--plan', 'pro', '--rate-limit-per-minute', '3', '--json'], ts.env);
      assert.equal(c.code, 0, c.stderr);
      const { apiKey } = JSON.parse(c.stdout) as { apiKey: string };
      const res = await fetch(`${server.url}/api/v1/credits/balance`, { headers: { 'x-api-key': apiKey } });
      assert.equal(res.headers.get('ratelimit-limit'), '3');
      assert.equal(((await res.json()) as { data: { balance: number } }).data.balance, 10_000_000, "the pro plan's credits");

      for (const args of [
        ['credits', 'grant', 'acc_nope', '5'],
        ['credits', 'grant', 'acc_x', '-5'],
        ['accounts', 'create', '--name', 'x', '--plan', 'gold'],
        ['accounts', 'create', '--name', 'x', '--credits', 'lots'],
        ['keys', 'revoke', 'key_nope'],
      ]) {
        const out = await runSdg(args, ts.env);
        assert.equal(out.code, 2, `${args.join(' ')}: ${out.stdout}${out.stderr}`);
        assert.match(out.stderr, /^sdg: /);
      }
    });

    test('a bad configuration stops the start with a message naming the variable', async () => {
      const out = await runSdg(['serve'], { ...ts.env, PORT: 'x' });
      assert.equal(out.code, 2);
      assert.match(out.stderr, /PORT must be an integer/);
    });
  });
}
