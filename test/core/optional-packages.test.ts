// The embedded default loads none of the optional integrations: each is imported only when
// configured (ioredis, @atproto/api, pg) or first used (viem). Their heap would lengthen every full
// garbage collection for nothing.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { LazyWalletService } from '../../src/connectors/wallet/lazy-wallet-service.js';
import type { WalletBalance, WalletService } from '../../src/connectors/wallet/wallet-service.js';
import { repoRoot } from '../helpers/processes.js';

test('building the app on the embedded default loads no optional integration', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/loaded-packages.ts'], { cwd: repoRoot }).toString();
  const loaded = new Set(out.trim().split('\n'));
  // The recorder sees what the app does load, so an absence below means something.
  for (const used of ['fastify', 'better-sqlite3', 'kysely', 'pino']) assert.ok(loaded.has(used), `${used} should be loaded`);
  for (const optional of ['viem', '@atproto/api', 'pg', 'ioredis']) assert.ok(!loaded.has(optional), `${optional} was loaded`);
});

test('the lazy wallet loads its service once, for concurrent first calls, and retries a failed load', async () => {
  const balance = { address: '0x1', chain: 'c', chainId: 1, balance: '5', decimals: 0, symbol: 'X', formatted: '5', blockNumber: 1 } satisfies WalletBalance;
  let loads = 0;
  let fail = true;
  const lazy = new LazyWalletService(async () => {
    loads++;
    if (fail) throw new Error('cannot load');
    return { getBalance: async (address) => ({ ...balance, address }) } satisfies WalletService;
  });
  await assert.rejects(lazy.getBalance('0xa'), /cannot load/);
  fail = false;
  const answers = await Promise.all([lazy.getBalance('0xb'), lazy.getBalance('0xc')]);
  assert.deepEqual(answers.map((a) => a.address), ['0xb', '0xc']);
  await lazy.getBalance('0xd');
  assert.equal(loads, 2);
});
