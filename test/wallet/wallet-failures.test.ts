// ViemWalletService against scripted and broken RPC endpoints (all on loopback).
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { AppError, type ErrorCode } from '../../src/errors/app-error.js';
import type { WalletChainConfig } from '../../src/connectors/wallet/chains.js';
import { ViemWalletService, type WalletRpcErrorEvent } from '../../src/connectors/wallet/wallet-service.js';
import { startFakeRpc, startSilentServer, unusedPort, type FakeAnswer, type RpcCall, type RunningServer } from './helpers.js';

const ADDRESS = '0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1';
const SECRET = 'sk-SECRET-KEY-0123';

function chain(url: string, overrides: Partial<WalletChainConfig> = {}): WalletChainConfig {
  return { name: 'test', chainId: 5, rpcUrl: `${url}/v3/${SECRET}?apikey=${SECRET}`, symbol: 'ETH', decimals: 18, ...overrides };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected AppError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected a rejection');
}

function assertNoLeak(err: AppError, events: WalletRpcErrorEvent[] = []): void {
  const text = JSON.stringify({ message: err.message, details: err.details, events });
  assert.ok(!text.includes(SECRET), `leaked the key: ${text}`);
  assert.ok(!text.includes('127.0.0.1'), `leaked the host: ${text}`);
  assert.ok(!text.includes('http://'), `leaked a URL: ${text}`);
}

function expectCode(err: AppError, code: ErrorCode, status: number): void {
  assert.equal(err.code, code, err.message);
  assert.equal(err.status, status);
}

/** A well-behaved node: chain 5, head 0x10, 1 ETH for everyone. */
function healthy(call: RpcCall): FakeAnswer {
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x5' };
    case 'eth_blockNumber':
      return { result: '0x10' };
    case 'eth_getBalance':
      return { result: '0xde0b6b3a7640000' };
    default:
      return { error: { code: -32601, message: 'method not found' } };
  }
}

describe('ViemWalletService failures', () => {
  const servers: RunningServer[] = [];
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it('reads the balance at the block number it read first', async () => {
    const rpc = await startFakeRpc(healthy);
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)]);
    const result = await service.getBalance(ADDRESS.toLowerCase());
    assert.deepEqual(result, {
      address: ADDRESS,
      chain: 'test',
      chainId: 5,
      balance: '1000000000000000000',
      decimals: 18,
      symbol: 'ETH',
      formatted: '1',
      blockNumber: 16,
    });
    assert.deepEqual(
      rpc.calls.map((c) => c.method),
      ['eth_chainId', 'eth_blockNumber', 'eth_getBalance'],
    );
    assert.deepEqual(rpc.calls[2]?.params, [ADDRESS, '0x10']);
    assert.equal(rpc.calls[0]?.path, `/v3/${SECRET}?apikey=${SECRET}`);
  });

  it('checks eth_chainId once, also under concurrent first requests', async () => {
    const rpc = await startFakeRpc(healthy);
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)]);
    const results = await Promise.all(Array.from({ length: 5 }, () => service.getBalance(ADDRESS)));
    assert.equal(results.length, 5);
    await service.getBalance(ADDRESS);
    assert.equal(rpc.calls.filter((c) => c.method === 'eth_chainId').length, 1);
    assert.equal(rpc.calls.filter((c) => c.method === 'eth_getBalance').length, 6);
  });

  it('caches a chain id mismatch (upstream_error) without asking again', async () => {
    const rpc = await startFakeRpc((call) => (call.method === 'eth_chainId' ? { result: '0x1' } : healthy(call)));
    servers.push(rpc);
    const events: WalletRpcErrorEvent[] = [];
    const service = new ViemWalletService([chain(rpc.url)], { onRpcError: (e) => events.push(e) });
    for (let i = 0; i < 3; i += 1) {
      const err = await failure(service.getBalance(ADDRESS));
      expectCode(err, 'upstream_error', 502);
      assert.deepEqual(err.details, { chain: 'test', expectedChainId: 5, actualChainId: 1 });
      assertNoLeak(err, events);
    }
    assert.deepEqual(rpc.calls.map((c) => c.method), ['eth_chainId']);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.errorName, 'ChainIdMismatch');
  });

  it('does not cache a failed chain id check', async () => {
    let chainIdCalls = 0;
    const rpc = await startFakeRpc((call) => {
      if (call.method === 'eth_chainId') {
        chainIdCalls += 1;
        if (chainIdCalls === 1) return { httpStatus: 503, body: 'try later' };
      }
      return healthy(call);
    });
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
    expectCode(await failure(service.getBalance(ADDRESS)), 'upstream_unavailable', 503);
    assert.equal((await service.getBalance(ADDRESS)).balance, '1000000000000000000');
    assert.equal(chainIdCalls, 2);
  });

  it('answers upstream_unavailable quickly when nothing listens, without leaking the URL', async () => {
    const port = await unusedPort();
    const events: WalletRpcErrorEvent[] = [];
    const service = new ViemWalletService([chain(`http://127.0.0.1:${port}`)], { onRpcError: (e) => events.push(e) });
    const started = Date.now();
    const err = await failure(service.getBalance(ADDRESS));
    const elapsed = Date.now() - started;
    expectCode(err, 'upstream_unavailable', 503);
    assert.equal(err.message, 'The chain RPC endpoint for "test" is unavailable. Try again later.');
    assert.deepEqual(err.details, { chain: 'test' });
    assert.ok(elapsed < 3_000, `took ${elapsed} ms`);
    assertNoLeak(err, events);
    assert.equal(events.length, 1);
    assert.equal(events[0]?.code, 'upstream_unavailable');
    assert.equal(events[0]?.errorName, 'HttpRequestError');
    assert.match(events[0]?.reason ?? '', /ECONNREFUSED/);
  });

  it('answers upstream_timeout when the server accepts but never answers', async () => {
    const silent = await startSilentServer();
    servers.push(silent);
    const service = new ViemWalletService([chain(silent.url)], { timeoutMs: 300, retryCount: 0 });
    const started = Date.now();
    const err = await failure(service.getBalance(ADDRESS));
    const elapsed = Date.now() - started;
    expectCode(err, 'upstream_timeout', 504);
    assert.equal(err.message, 'The chain RPC endpoint for "test" did not answer within 300 ms. Try again later.');
    assert.ok(elapsed >= 250 && elapsed < 3_000, `took ${elapsed} ms`);
    assertNoLeak(err);
  });

  it('answers upstream_timeout when a later call hangs', async () => {
    let hang = false;
    const rpc = await startFakeRpc((call) => (hang && call.method === 'eth_getBalance' ? { hang: true } : healthy(call)));
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { timeoutMs: 300, retryCount: 0 });
    assert.equal((await service.getBalance(ADDRESS)).formatted, '1');
    hang = true;
    const err = await failure(service.getBalance(ADDRESS));
    expectCode(err, 'upstream_timeout', 504);
    assertNoLeak(err);
    hang = false;
    assert.equal((await service.getBalance(ADDRESS)).formatted, '1');
  });

  it('maps a JSON-RPC error to upstream_unavailable', async () => {
    const rpc = await startFakeRpc((call) =>
      call.method === 'eth_getBalance' ? { error: { code: -32000, message: `header not found ${SECRET}` } } : healthy(call),
    );
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
    const err = await failure(service.getBalance(ADDRESS));
    expectCode(err, 'upstream_unavailable', 503);
    assertNoLeak(err);
  });

  it('maps HTTP 500 and 401 answers to upstream_unavailable', async () => {
    for (const status of [500, 401]) {
      const rpc = await startFakeRpc(() => ({ httpStatus: status, body: `no ${SECRET}` }));
      servers.push(rpc);
      const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
      const events: WalletRpcErrorEvent[] = [];
      const withHook = new ViemWalletService([chain(rpc.url)], { retryCount: 0, onRpcError: (e) => events.push(e) });
      const err = await failure(service.getBalance(ADDRESS));
      expectCode(err, 'upstream_unavailable', 503);
      assertNoLeak(err);
      await failure(withHook.getBalance(ADDRESS));
      assert.equal(events[0]?.httpStatus, status);
    }
  });

  it('retries a 503 once by default', async () => {
    let balanceCalls = 0;
    const rpc = await startFakeRpc((call) => {
      if (call.method === 'eth_getBalance') {
        balanceCalls += 1;
        if (balanceCalls === 1) return { httpStatus: 503, body: 'busy' };
      }
      return healthy(call);
    });
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryDelayMs: 10 });
    assert.equal((await service.getBalance(ADDRESS)).formatted, '1');
    assert.equal(balanceCalls, 2);
  });

  it('maps a malformed result to upstream_error', async () => {
    const rpc = await startFakeRpc((call) => (call.method === 'eth_getBalance' ? { result: 'lots' } : healthy(call)));
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
    const err = await failure(service.getBalance(ADDRESS));
    expectCode(err, 'upstream_error', 502);
    assert.equal(err.message, 'The chain RPC endpoint for "test" returned an unexpected response.');
  });

  it('maps a 2xx answer that is not JSON (a proxy\'s page) to upstream_error, not an outage', async () => {
    const rpc = await startFakeRpc((call) => (call.method === 'eth_getBalance' ? { httpStatus: 200, body: `<html>${SECRET}</html>` } : healthy(call)));
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
    const err = await failure(service.getBalance(ADDRESS));
    expectCode(err, 'upstream_error', 502);
    assert.equal(err.message, 'The chain RPC endpoint for "test" returned an unexpected response.');
    assertNoLeak(err);
  });

  it('refuses a block number beyond 2^53 - 1 (upstream_error)', async () => {
    const rpc = await startFakeRpc((call) => (call.method === 'eth_blockNumber' ? { result: '0x20000000000000' } : healthy(call)));
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)], { retryCount: 0 });
    const err = await failure(service.getBalance(ADDRESS));
    expectCode(err, 'upstream_error', 502);
  });

  it('formats non-18-decimal tokens exactly', async () => {
    const rpc = await startFakeRpc((call) => (call.method === 'eth_getBalance' ? { result: '0x16e360' } : healthy(call)));
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url, { decimals: 6, symbol: 'USDX' })]);
    const result = await service.getBalance(ADDRESS);
    assert.equal(result.balance, '1500000');
    assert.equal(result.formatted, '1.5');
    assert.equal(result.symbol, 'USDX');
  });

  it('does not call the RPC for invalid input', async () => {
    const rpc = await startFakeRpc(healthy);
    servers.push(rpc);
    const service = new ViemWalletService([chain(rpc.url)]);
    expectCode(await failure(service.getBalance('0x123')), 'invalid_request', 400);
    expectCode(await failure(service.getBalance(ADDRESS, 'mainnet')), 'invalid_request', 400);
    assert.equal(rpc.calls.length, 0);
  });

  it('survives a throwing onRpcError hook', async () => {
    const port = await unusedPort();
    const service = new ViemWalletService([chain(`http://127.0.0.1:${port}`)], {
      retryCount: 0,
      onRpcError: () => {
        throw new Error('hook broke');
      },
    });
    expectCode(await failure(service.getBalance(ADDRESS)), 'upstream_unavailable', 503);
  });
});
