import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  DEFAULT_WALLET_CHAIN,
  parseWalletChains,
  parseWalletConfig,
  parseWalletDefaultChain,
} from '../../src/connectors/wallet/chains.js';

const good = {
  name: 'ethereum',
  chainId: 1,
  rpcUrl: 'https://mainnet.example/v3/KEY123',
  symbol: 'ETH',
  decimals: 18,
};
const base = { name: 'base-sepolia', chainId: 84532, rpcUrl: 'http://10.0.0.5:8545', symbol: 'ETH', decimals: 18 };

function env(chains: unknown, extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { WALLET_CHAINS: typeof chains === 'string' ? chains : JSON.stringify(chains), ...extra };
}

describe('parseWalletChains', () => {
  it('defaults to the public Ethereum endpoint when unset or blank', () => {
    const expected = [{ name: 'ethereum', chainId: 1, rpcUrl: 'https://cloudflare-eth.com', symbol: 'ETH', decimals: 18 }];
    assert.deepEqual(parseWalletChains({}), expected);
    assert.deepEqual(parseWalletChains({ WALLET_CHAINS: '  ' }), expected);
    assert.deepEqual(DEFAULT_WALLET_CHAIN, expected[0]);
  });

  it('parses a valid list in order', () => {
    assert.deepEqual(parseWalletChains(env([good, base])), [good, base]);
    assert.deepEqual(parseWalletChains(env([{ ...good, name: 'a1', decimals: 0 }, { ...base, name: 'b', decimals: 36 }])), [
      { ...good, name: 'a1', decimals: 0 },
      { ...base, name: 'b', decimals: 36 },
    ]);
  });

  const bad: [string, unknown, RegExp][] = [
    ['not JSON', '[{', /^WALLET_CHAINS is not valid JSON/],
    ['not an array', { ...good }, /^WALLET_CHAINS must be a JSON array/],
    ['empty array', [], /^WALLET_CHAINS must list at least one chain/],
    ['entry not an object', [good, 'x'], /^WALLET_CHAINS\[1\] must be an object/],
    ['unknown key', [{ ...good, rpcURL: 'https://x' }], /^WALLET_CHAINS\[0\]\.rpcURL is not a known field/],
    ['missing name', [{ ...good, name: undefined }], /^WALLET_CHAINS\[0\]\.name must be a lowercase slug/],
    ['uppercase name', [{ ...good, name: 'Ethereum' }], /^WALLET_CHAINS\[0\]\.name /],
    ['name with space', [{ ...good, name: 'my chain' }], /^WALLET_CHAINS\[0\]\.name /],
    ['name starting with digit', [{ ...good, name: '1chain' }], /^WALLET_CHAINS\[0\]\.name /],
    ['name with double hyphen', [{ ...good, name: 'a--b' }], /^WALLET_CHAINS\[0\]\.name /],
    ['name too long', [{ ...good, name: 'a'.repeat(33) }], /^WALLET_CHAINS\[0\]\.name /],
    ['chainId zero', [{ ...good, chainId: 0 }], /^WALLET_CHAINS\[0\]\.chainId \(chain "ethereum"\) must be a positive integer/],
    ['chainId negative', [{ ...good, chainId: -1 }], /\.chainId /],
    ['chainId fraction', [{ ...good, chainId: 1.5 }], /\.chainId /],
    ['chainId string', [{ ...good, chainId: '1' }], /\.chainId /],
    ['missing chainId', [{ ...good, chainId: undefined }], /\.chainId /],
    ['rpcUrl missing', [{ ...good, rpcUrl: undefined }], /^WALLET_CHAINS\[0\]\.rpcUrl \(chain "ethereum"\) must be a non-empty/],
    ['rpcUrl garbage', [{ ...good, rpcUrl: 'not a url' }], /\.rpcUrl \(chain "ethereum"\) is not a valid URL/],
    ['rpcUrl ws', [{ ...good, rpcUrl: 'wss://x.example' }], /\.rpcUrl \(chain "ethereum"\) must use http/],
    ['rpcUrl credentials', [{ ...good, rpcUrl: 'https://u:p@x.example' }], /\.rpcUrl .*credentials/],
    ['symbol empty', [{ ...good, symbol: '' }], /^WALLET_CHAINS\[0\]\.symbol /],
    ['symbol blank', [{ ...good, symbol: '  ' }], /\.symbol /],
    ['symbol number', [{ ...good, symbol: 5 }], /\.symbol /],
    ['symbol too long', [{ ...good, symbol: 'X'.repeat(17) }], /\.symbol /],
    ['decimals negative', [{ ...good, decimals: -1 }], /^WALLET_CHAINS\[0\]\.decimals \(chain "ethereum"\) must be an integer from 0 to 36/],
    ['decimals 37', [{ ...good, decimals: 37 }], /\.decimals /],
    ['decimals fraction', [{ ...good, decimals: 1.5 }], /\.decimals /],
    ['decimals string', [{ ...good, decimals: '18' }], /\.decimals /],
    ['duplicate name', [good, { ...base, name: 'ethereum' }], /^WALLET_CHAINS\[1\]\.name "ethereum" duplicates WALLET_CHAINS\[0\]\.name/],
    ['duplicate chainId', [good, { ...base, chainId: 1 }], /^WALLET_CHAINS\[1\]\.chainId 1 duplicates WALLET_CHAINS\[0\]\.chainId/],
    ['second entry bad', [good, { ...base, decimals: 99 }], /^WALLET_CHAINS\[1\]\.decimals \(chain "base-sepolia"\)/],
  ];
  for (const [label, value, message] of bad) {
    it(`rejects ${label}`, () => {
      assert.throws(() => parseWalletChains(env(value)), (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, message);
        return true;
      });
    });
  }

  it('never echoes the RPC URL in errors', () => {
    for (const rpcUrl of ['ftp://host/KEY999', 'https://user:KEY999@host', 'KEY999']) {
      assert.throws(
        () => parseWalletChains(env([{ ...good, rpcUrl }])),
        (err: unknown) => err instanceof Error && !err.message.includes('KEY999'),
      );
    }
  });
});

describe('parseWalletDefaultChain and parseWalletConfig', () => {
  it('defaults to the first chain', () => {
    assert.equal(parseWalletDefaultChain({}, [base, good]), 'base-sepolia');
    assert.equal(parseWalletDefaultChain({ WALLET_DEFAULT_CHAIN: '' }, [base, good]), 'base-sepolia');
  });

  it('accepts a configured chain and rejects others, listing the configured ones', () => {
    assert.equal(parseWalletDefaultChain({ WALLET_DEFAULT_CHAIN: 'ethereum' }, [base, good]), 'ethereum');
    assert.throws(
      () => parseWalletDefaultChain({ WALLET_DEFAULT_CHAIN: 'polygon' }, [base, good]),
      { message: 'WALLET_DEFAULT_CHAIN "polygon" is not a configured chain (configured: base-sepolia, ethereum).' },
    );
  });

  it('parses the whole configuration with defaults', () => {
    assert.deepEqual(parseWalletConfig({}), {
      chains: [DEFAULT_WALLET_CHAIN],
      defaultChain: 'ethereum',
      rpcTimeoutMs: 10_000,
      rpcRetries: 1,
    });
    assert.deepEqual(
      parseWalletConfig(env([good, base], { WALLET_DEFAULT_CHAIN: 'base-sepolia', WALLET_RPC_TIMEOUT_MS: '2500', WALLET_RPC_RETRIES: '0' })),
      { chains: [good, base], defaultChain: 'base-sepolia', rpcTimeoutMs: 2500, rpcRetries: 0 },
    );
  });

  it('rejects bad timeout and retry values', () => {
    for (const value of ['0', '99', '120001', 'abc', '1.5', '-5']) {
      assert.throws(() => parseWalletConfig({ WALLET_RPC_TIMEOUT_MS: value }), /WALLET_RPC_TIMEOUT_MS must be an integer from 100 to 120000/);
    }
    for (const value of ['4', 'x', '-1']) {
      assert.throws(() => parseWalletConfig({ WALLET_RPC_RETRIES: value }), /WALLET_RPC_RETRIES must be an integer from 0 to 3/);
    }
  });
});
