// ViemWalletService against a real (in-process, loopback) ganache node.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPublicClient, createWalletClient, defineChain, http, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { AppError, type ErrorCode } from '../../src/errors/app-error.js';
import type { WalletChainConfig } from '../../src/connectors/wallet/chains.js';
import { ViemWalletService } from '../../src/connectors/wallet/wallet-service.js';
import {
  DETERMINISTIC_ADDRESS,
  DETERMINISTIC_KEY,
  GANACHE_CHAIN_ID,
  startGanache,
  type RunningServer,
} from './helpers.js';
import { json, startHarness } from '../helpers/harness.js';

const THOUSAND_ETH = '1000000000000000000000';
const RECIPIENT = '0x1111111111111111111111111111111111111111';
const RECIPIENT_CHECKSUMMED = '0x1111111111111111111111111111111111111111';
const UNFUNDED = '0x5B38Da6a701c568545dCfcB03FcB875f56beddC4';

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode, check?: (err: AppError) => void): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof AppError, `expected AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    check?.(err);
    return true;
  });
}

/** The one field an invalid_request names. */
function fieldOf(err: AppError): unknown {
  const fields = (err.details ?? {})['fields'] as Array<{ field: string }> | undefined;
  assert.equal(fields?.length, 1);
  return fields?.[0]?.field;
}

describe('ViemWalletService with ganache', () => {
  let node: RunningServer;
  let service: ViemWalletService;
  let chains: WalletChainConfig[];

  before(async () => {
    node = await startGanache();
    chains = [
      { name: 'local', chainId: GANACHE_CHAIN_ID, rpcUrl: node.url, symbol: 'ETH', decimals: 18 },
      { name: 'local-gwei', chainId: 999_999, rpcUrl: node.url, symbol: 'GW', decimals: 9 },
    ];
    service = new ViemWalletService(chains, { timeoutMs: 5_000 });
  });

  after(async () => {
    await node.close();
  });

  it('answers through the gateway wired from WALLET_CHAINS (viem loaded on the first call)', async () => {
    const h = await startHarness('sqlite', { WALLET_CHAINS: JSON.stringify([{ name: 'local', chainId: GANACHE_CHAIN_ID, rpcUrl: node.url, symbol: 'ETH', decimals: 18 }]) });
    try {
      const a = await h.account({ credits: 1000 });
      const res = await h.app.inject({ url: `/wallet/v1/balance/${DETERMINISTIC_ADDRESS}`, headers: { 'x-api-key': a.apiKey } });
      assert.equal(res.statusCode, 200, res.body);
      const d = json<{ data: { address: string; chain: string; balance: string } }>(res).data;
      assert.equal(d.address, DETERMINISTIC_ADDRESS);
      assert.equal(d.chain, 'local');
      assert.equal(res.headers['x-credits-charged'], '100');
    } finally {
      await h.close();
    }
  });

  it('derives the deterministic account from its key', () => {
    assert.equal(privateKeyToAccount(DETERMINISTIC_KEY).address, DETERMINISTIC_ADDRESS);
  });

  it('returns the 1000 ETH of a funded account at the current block', async () => {
    const reader = createPublicClient({ transport: http(node.url) });
    const head = Number(await reader.getBlockNumber({ cacheTime: 0 }));
    const result = await service.getBalance(DETERMINISTIC_ADDRESS);
    assert.deepEqual(result, {
      address: DETERMINISTIC_ADDRESS,
      chain: 'local',
      chainId: GANACHE_CHAIN_ID,
      balance: THOUSAND_ETH,
      decimals: 18,
      symbol: 'ETH',
      formatted: '1000',
      blockNumber: head,
    });
    assert.equal(typeof result.blockNumber, 'number');
  });

  it('accepts a lowercase or uppercase address and answers checksummed', async () => {
    const lower = await service.getBalance(DETERMINISTIC_ADDRESS.toLowerCase(), 'local');
    assert.equal(lower.address, DETERMINISTIC_ADDRESS);
    assert.equal(lower.balance, THOUSAND_ETH);
    const upper = await service.getBalance(`0x${DETERMINISTIC_ADDRESS.slice(2).toUpperCase()}`, 'LOCAL');
    assert.equal(upper.address, DETERMINISTIC_ADDRESS);
    assert.equal(upper.chain, 'local');
  });

  it('gives 0 for an unfunded address', async () => {
    const result = await service.getBalance(UNFUNDED.toLowerCase());
    assert.equal(result.address, UNFUNDED);
    assert.equal(result.balance, '0');
    assert.equal(result.formatted, '0');
  });

  it('sees a transfer change both balances exactly, at the new block', async () => {
    const before = await service.getBalance(DETERMINISTIC_ADDRESS);
    const recipientBefore = await service.getBalance(RECIPIENT);
    assert.equal(recipientBefore.balance, '0');

    const chain = defineChain({
      id: GANACHE_CHAIN_ID,
      name: 'ganache',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [node.url] } },
    });
    const wallet = createWalletClient({ account: privateKeyToAccount(DETERMINISTIC_KEY), chain, transport: http(node.url) });
    const reader = createPublicClient({ chain, transport: http(node.url) });
    const value = parseEther('1.5');
    const hash = await wallet.sendTransaction({ to: RECIPIENT, value });
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    assert.equal(receipt.status, 'success');
    const fee = receipt.gasUsed * receipt.effectiveGasPrice;
    assert.ok(fee > 0n);

    const senderAfter = await service.getBalance(DETERMINISTIC_ADDRESS);
    const recipientAfter = await service.getBalance(RECIPIENT);
    assert.equal(senderAfter.balance, (BigInt(before.balance) - value - fee).toString());
    assert.equal(recipientAfter.balance, '1500000000000000000');
    assert.equal(recipientAfter.formatted, '1.5');
    assert.equal(recipientAfter.address, RECIPIENT_CHECKSUMMED);
    assert.equal(senderAfter.blockNumber, Number(receipt.blockNumber));
    assert.equal(senderAfter.blockNumber, before.blockNumber + 1);
  });

  it('refuses a node whose eth_chainId differs from the configuration, and remembers it', async () => {
    // Same node, configured with a wrong chain id: must be refused, not formatted.
    await rejectsWith(service.getBalance(DETERMINISTIC_ADDRESS, 'local-gwei'), 'upstream_error', (err) => {
      assert.equal(
        err.message,
        'The chain RPC endpoint for "local-gwei" serves chain id 1337, but chain id 999999 is configured; the operator must fix WALLET_CHAINS.',
      );
      assert.deepEqual(err.details, { chain: 'local-gwei', expectedChainId: 999_999, actualChainId: GANACHE_CHAIN_ID });
      assert.equal(err.status, 502);
    });
    await rejectsWith(service.getBalance(DETERMINISTIC_ADDRESS, 'local-gwei'), 'upstream_error');
    // The other chain of the same service is unaffected.
    assert.equal((await service.getBalance(UNFUNDED, 'local')).balance, '0');
  });

  it('formats with the configured decimals and symbol', async () => {
    const gwei = new ViemWalletService([{ name: 'gwei', chainId: GANACHE_CHAIN_ID, rpcUrl: node.url, symbol: 'GW', decimals: 9 }]);
    // RECIPIENT holds 1.5 ETH = 1.5e18 smallest units since the transfer test.
    const result = await gwei.getBalance(RECIPIENT);
    assert.equal(result.balance, '1500000000000000000');
    assert.equal(result.formatted, '1500000000');
    assert.equal(result.symbol, 'GW');
    assert.equal(result.decimals, 9);
    assert.equal(result.chain, 'gwei');
  });

  it('rejects malformed addresses with invalid_request on field address', async () => {
    const bad = [
      '0x123',
      'hello',
      '',
      `0x${'a'.repeat(41)}`,
      `0x${'a'.repeat(39)}`,
      `0X${'a'.repeat(40)}`,
      'a'.repeat(40),
      `0x${'g'.repeat(40)}`,
      ` ${DETERMINISTIC_ADDRESS}`,
      `${DETERMINISTIC_ADDRESS} `,
    ];
    for (const address of bad) {
      await rejectsWith(service.getBalance(address), 'invalid_request', (err) => {
        assert.deepEqual(err.details, { fields: [{ field: 'params.address', message: 'must be 0x followed by 40 hexadecimal characters' }] }, JSON.stringify(address));
        assert.equal(err.status, 400);
      });
    }
  });

  it('rejects a mixed-case address with a wrong checksum', async () => {
    // Flip the case of one letter of a valid checksummed address.
    const wrong = DETERMINISTIC_ADDRESS.replace('F8bf', 'f8bf');
    assert.notEqual(wrong, DETERMINISTIC_ADDRESS);
    await rejectsWith(service.getBalance(wrong), 'invalid_request', (err) => {
      // details.fields, as every invalid_request names its fields (the OpenAPI's InvalidRequest).
      assert.deepEqual(err.details, { fields: [{ field: 'params.address', message: 'has an invalid EIP-55 checksum' }], reason: 'bad_checksum' });
      assert.match(err.message, /checksum/);
    });
  });

  it('rejects an unknown chain naming the configured ones', async () => {
    await rejectsWith(service.getBalance(DETERMINISTIC_ADDRESS, 'polygon'), 'invalid_request', (err) => {
      assert.equal(err.message, 'Unknown chain "polygon". Configured chains: local, local-gwei.');
      assert.deepEqual(err.details, { fields: [{ field: 'querystring.chain', message: 'must be one of local, local-gwei' }], allowed: ['local', 'local-gwei'] });
    });
    await rejectsWith(service.getBalance(DETERMINISTIC_ADDRESS, ''), 'invalid_request', (err) => {
      assert.equal(fieldOf(err), 'querystring.chain');
    });
  });

  it('validates the address before the chain', async () => {
    await rejectsWith(service.getBalance('nope', 'polygon'), 'invalid_request', (err) => {
      assert.equal(fieldOf(err), 'params.address');
    });
  });

  it('uses the configured default chain', async () => {
    const other = new ViemWalletService(
      [
        { name: 'a', chainId: 5, rpcUrl: 'http://127.0.0.1:9', symbol: 'X', decimals: 18 },
        { name: 'b', chainId: GANACHE_CHAIN_ID, rpcUrl: node.url, symbol: 'ETH', decimals: 18 },
      ],
      { defaultChain: 'b' },
    );
    assert.equal(other.defaultChain, 'b');
    const result = await other.getBalance(UNFUNDED);
    assert.equal(result.chain, 'b');
    assert.deepEqual(other.chains, [
      { name: 'a', chainId: 5, symbol: 'X', decimals: 18 },
      { name: 'b', chainId: GANACHE_CHAIN_ID, symbol: 'ETH', decimals: 18 },
    ]);
    assert.throws(() => new ViemWalletService(chains, { defaultChain: 'zzz' }), /Default chain "zzz"/);
    assert.throws(() => new ViemWalletService([]), /at least one chain/);
  });
});
