import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { WalletBalanceSchema, WalletParams, WalletQuery, type WalletBalanceData } from '../../src/connectors/wallet/schema.js';
import { StaticWalletService } from '../../src/connectors/wallet/static-wallet-service.js';
import type { WalletBalance } from '../../src/connectors/wallet/wallet-service.js';

// Compile-time: the service type and the schema type are the same shape.
const toSchema = (b: WalletBalance): WalletBalanceData => b;
const fromSchema = (b: WalletBalanceData): WalletBalance => b;

describe('wallet schemas', () => {
  it('accepts what the service returns', async () => {
    const result = await new StaticWalletService({ balances: { ethereum: { '0x1111111111111111111111111111111111111111': 5n } } }).getBalance(
      '0x1111111111111111111111111111111111111111',
    );
    assert.equal(Value.Check(WalletBalanceSchema, toSchema(result)), true);
    assert.equal(fromSchema(result).balance, '5');
    assert.equal(Value.Check(WalletBalanceSchema, { ...result, balance: '01' }), false);
    assert.equal(Value.Check(WalletBalanceSchema, { ...result, balance: 5 }), false);
    assert.equal(Value.Check(WalletBalanceSchema, { ...result, blockNumber: '5' }), false);
    assert.equal(Value.Check(WalletBalanceSchema, { ...result, extra: 1 }), false);
  });

  it('describes params and query', () => {
    assert.equal(Value.Check(WalletParams, { address: '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1' }), true);
    assert.equal(Value.Check(WalletParams, { address: '0x123' }), false);
    assert.equal(Value.Check(WalletParams, { address: `0x${'a'.repeat(41)}` }), false);
    assert.equal(Value.Check(WalletQuery, {}), true);
    assert.equal(Value.Check(WalletQuery, { chain: 'ethereum' }), true);
    assert.equal(Value.Check(WalletQuery, { chain: '' }), false);
  });
});
