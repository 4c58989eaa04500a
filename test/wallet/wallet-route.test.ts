// The HTTP route over the wallet service: validation, envelope, cost, and no charge on failure.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { StaticWalletService } from '../../src/connectors/wallet/static-wallet-service.js';
import { AppError } from '../../src/errors/app-error.js';
import { getBalance } from '../../src/credits/credits-repo.js';
import { backends } from '../helpers/backends.js';
import { errorOf, json, startHarness, type Harness } from '../helpers/harness.js';

const ADDR = '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1';

for (const backend of backends()) {
  describe(`GET /wallet/v1/balance/{address} (${backend})`, () => {
    let h: Harness;
    const wallet = new StaticWalletService({ balances: { ethereum: { [ADDR]: 1234500000000000000n } }, blockNumber: 42 });
    before(async () => {
      h = await startHarness(backend, {}, (deps) => {
        deps.wallet = wallet;
      });
    });
    after(() => h.close());

    test('answers the balance and charges 100 credits', async () => {
      const a = await h.account({ credits: 1000 });
      const res = await h.app.inject({ url: `/wallet/v1/balance/${ADDR.toLowerCase()}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 200, res.body);
      const d = json<{ data: Record<string, unknown> }>(res).data;
      assert.deepEqual(d, { address: ADDR, chain: 'ethereum', chainId: 1, balance: '1234500000000000000', decimals: 18, symbol: 'ETH', formatted: '1.2345', blockNumber: 42 });
      assert.equal(res.headers['x-credits-charged'], '100');
      assert.equal(res.headers['x-credits-remaining'], '900');
    });

    test('malformed address and unknown chain are 400 and free', async () => {
      const a = await h.account({ credits: 1000 });
      for (const url of ['/wallet/v1/balance/0x123', '/wallet/v1/balance/hello', `/wallet/v1/balance/${ADDR}?chain=dogecoin`]) {
        const res = await h.app.inject({ url, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 400, url);
        assert.equal(errorOf(res).code, 'invalid_request');
        assert.equal(res.headers['x-credits-charged'], '0');
      }
      assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
    });

    test('RPC down is 503 upstream_unavailable and free', async () => {
      const a = await h.account({ credits: 1000 });
      wallet.failure = new AppError('upstream_unavailable', 'The chain RPC endpoint for "ethereum" is unavailable.');
      try {
        const res = await h.app.inject({ url: `/wallet/v1/balance/${ADDR}`, headers: { 'x-api-key': a.apiKey } });
        assert.equal(res.statusCode, 503);
        assert.equal(errorOf(res).code, 'upstream_unavailable');
        assert.equal((await getBalance(h.deps.store.db, a.accountId))!.balance, 1000);
      } finally {
        wallet.failure = undefined;
      }
    });
  });
}
