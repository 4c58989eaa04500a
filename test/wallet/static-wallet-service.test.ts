import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../src/errors/app-error.js';
import { StaticWalletService } from '../../src/connectors/wallet/static-wallet-service.js';
import type { WalletService } from '../../src/connectors/wallet/wallet-service.js';

const ADDRESS = '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1';

describe('StaticWalletService', () => {
  it('answers fixed balances, checksummed, 0 for unknown addresses', async () => {
    const service: WalletService = new StaticWalletService({
      balances: { ethereum: { [ADDRESS.toLowerCase()]: 1_500_000_000_000_000_000n } },
      blockNumber: 42,
    });
    assert.deepEqual(await service.getBalance(ADDRESS.toLowerCase()), {
      address: ADDRESS,
      chain: 'ethereum',
      chainId: 1,
      balance: '1500000000000000000',
      decimals: 18,
      symbol: 'ETH',
      formatted: '1.5',
      blockNumber: 42,
    });
    const empty = await service.getBalance('0x1111111111111111111111111111111111111111');
    assert.equal(empty.balance, '0');
    assert.equal(empty.formatted, '0');
  });

  it('supports several chains and a default', async () => {
    const service = new StaticWalletService({
      chains: [
        { name: 'ethereum', chainId: 1, rpcUrl: 'http://unused', symbol: 'ETH', decimals: 18 },
        { name: 'usdx', chainId: 77, rpcUrl: 'http://unused', symbol: 'USDX', decimals: 6 },
      ],
      defaultChain: 'usdx',
      balances: { usdx: { [ADDRESS]: '2500000' } },
    });
    const result = await service.getBalance(ADDRESS);
    assert.equal(result.chain, 'usdx');
    assert.equal(result.formatted, '2.5');
    assert.equal((await service.getBalance(ADDRESS, 'ethereum')).balance, '0');
    service.setBalance('ethereum', ADDRESS, 10n ** 18n);
    assert.equal((await service.getBalance(ADDRESS, 'ethereum')).formatted, '1');
  });

  it('validates like the real service', async () => {
    const service = new StaticWalletService();
    await assert.rejects(service.getBalance('0x123'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'invalid_request');
      assert.deepEqual(err.details, { fields: [{ field: 'params.address', message: 'must be 0x followed by 40 hexadecimal characters' }] });
      return true;
    });
    await assert.rejects(service.getBalance(ADDRESS, 'polygon'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.message, 'Unknown chain "polygon". Configured chains: ethereum.');
      return true;
    });
  });

  it('can simulate an upstream failure and counts calls', async () => {
    const service = new StaticWalletService();
    service.failure = new AppError('upstream_unavailable', 'The chain RPC endpoint for "ethereum" is unavailable.');
    await assert.rejects(service.getBalance(ADDRESS), { code: 'upstream_unavailable', status: 503 });
    // Bad input is still reported as bad input.
    await assert.rejects(service.getBalance('x'), { code: 'invalid_request' });
    service.failure = undefined;
    assert.equal((await service.getBalance(ADDRESS)).balance, '0');
    assert.equal(service.calls, 3);
  });

  it('rejects bad set-up', () => {
    assert.throws(() => new StaticWalletService({ balances: { nowhere: { [ADDRESS]: 1n } } }), AppError);
    assert.throws(() => new StaticWalletService({ balances: { ethereum: { [ADDRESS]: -1n } } }), /negative/);
    assert.throws(() => new StaticWalletService({ defaultChain: 'zzz' }), /Default chain "zzz"/);
  });
});
