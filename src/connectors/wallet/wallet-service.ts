// Wallet connector service layer: native-currency balance of an address on a configured chain,
// read over JSON-RPC with viem.
import {
  BaseError,
  HttpRequestError,
  RpcError,
  TimeoutError,
  createPublicClient,
  formatUnits,
  hexToNumber,
  http,
  type Address,
  type HttpTransport,
  type PublicClient,
} from 'viem';
import { AppError, type ErrorCode } from '../../errors/app-error.js';
import { findCause } from '../../errors/cause-chain.js';
import { DEFAULT_RPC_RETRIES, DEFAULT_RPC_TIMEOUT_MS, type WalletChainConfig } from './chains.js';
import { checkDefaultChain, normalizeAddress, resolveChain } from './validation.js';
import { outboundFetch, refusedEncoding } from '../../sources/outbound-fetch.js';

/** docs/spec/contract.md, section 10, "Wallet". */
export interface WalletBalance {
  /** EIP-55 checksummed address. */
  address: string;
  /** Configured chain name. */
  chain: string;
  chainId: number;
  /** Balance in the smallest unit (wei for ETH), as a decimal string: it does not fit a JSON number. */
  balance: string;
  decimals: number;
  symbol: string;
  /** `balance` scaled by `decimals` (viem formatUnits): '1000', '0.5', '0'. No trailing zeros. */
  formatted: string;
  /**
   * Block at which the balance was read. A JSON number: block heights of real chains are many
   * orders of magnitude below 2^53; a node reporting a larger one is treated as a bad upstream
   * (upstream_error) rather than changing the type of the field.
   */
  blockNumber: number;
}

/** The answer for `wei` held by `address` on `config`'s chain at `blockNumber`. */
export function walletBalance(config: WalletChainConfig, address: string, wei: bigint, blockNumber: number): WalletBalance {
  return {
    address,
    chain: config.name,
    chainId: config.chainId,
    balance: wei.toString(),
    decimals: config.decimals,
    symbol: config.symbol,
    formatted: formatUnits(wei, config.decimals),
    blockNumber,
  };
}

export interface WalletService {
  /**
   * Throws AppError: invalid_request (details.field 'address' or 'chain'), upstream_unavailable
   * (RPC unreachable or answering with an error), upstream_timeout, upstream_error (chain id of the
   * node differs from the configuration, or a malformed answer).
   */
  getBalance(address: string, chain?: string): Promise<WalletBalance>;
}

/** Emitted for every failed RPC interaction; carries no URL, so it is safe to log. */
export interface WalletRpcErrorEvent {
  chain: string;
  code: ErrorCode;
  /** viem error class name, e.g. 'HttpRequestError', 'TimeoutError', 'InternalRpcError'. */
  errorName: string;
  /** Short description without the URL, e.g. 'HTTP request failed. (fetch failed; ECONNREFUSED)'. */
  reason: string;
  /** HTTP status of the RPC response, when there was one. */
  httpStatus?: number;
}

export interface ViemWalletServiceOptions {
  /** Chain used when a request names none; default: the first chain. */
  defaultChain?: string;
  /** Per-request timeout in ms (default 10000). */
  timeoutMs?: number;
  /** Extra attempts after a failed request (default 1; viem retries network errors, 429 and 5xx). */
  retryCount?: number;
  /** Delay before the first retry in ms (viem backs off exponentially; default 150). */
  retryDelayMs?: number;
  /** Hook for logging/metrics of RPC failures. Must not throw. */
  onRpcError?: (event: WalletRpcErrorEvent) => void;
}

interface ChainEntry {
  readonly config: WalletChainConfig;
  readonly client: PublicClient<HttpTransport>;
  chainIdVerified: boolean;
  /** A mismatch is a configuration error: remembered until restart. */
  chainIdMismatch?: AppError;
  /** Concurrent first requests share one eth_chainId call. */
  chainIdCheck?: Promise<void>;
}

export class ViemWalletService implements WalletService {
  readonly defaultChain: string;
  private readonly entries: readonly ChainEntry[];
  private readonly configs: readonly WalletChainConfig[];
  private readonly timeoutMs: number;
  private readonly onRpcError: ((event: WalletRpcErrorEvent) => void) | undefined;

  constructor(chains: readonly WalletChainConfig[], options: ViemWalletServiceOptions = {}) {
    this.defaultChain = checkDefaultChain(chains, options.defaultChain);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
    this.onRpcError = options.onRpcError;
    const retryCount = options.retryCount ?? DEFAULT_RPC_RETRIES;
    const retryDelay = options.retryDelayMs ?? 150;
    // One client per chain, created once. cacheTime 0: every request reads the current head
    // (viem otherwise caches eth_blockNumber for 4 s).
    this.entries = chains.map((config) => ({
      config,
      client: createPublicClient({
        transport: http(config.rpcUrl, { timeout: this.timeoutMs, retryCount, retryDelay, fetchFn: outboundFetch }),
        cacheTime: 0,
      }),
      chainIdVerified: false,
    }));
    this.configs = this.entries.map((entry) => entry.config);
  }

  /** Configured chains, without RPC URLs (for documentation or a chains endpoint). */
  get chains(): { name: string; chainId: number; symbol: string; decimals: number }[] {
    return this.entries.map(({ config: { name, chainId, symbol, decimals } }) => ({ name, chainId, symbol, decimals }));
  }

  async getBalance(address: string, chain?: string): Promise<WalletBalance> {
    const checksummed = normalizeAddress(address);
    const config = resolveChain(this.configs, this.defaultChain, chain);
    const entry = this.entries[this.configs.indexOf(config)];
    if (entry === undefined) throw new AppError('internal_error', 'Wallet chain lookup failed.');
    await this.ensureChainId(entry);
    return this.readBalance(entry, checksummed);
  }

  private async readBalance(entry: ChainEntry, address: Address): Promise<WalletBalance> {
    const { config, client } = entry;
    let block: bigint;
    let wei: bigint;
    try {
      // Block first, then the balance *at that block*: the pair is consistent even if a new block
      // arrives in between.
      block = await client.getBlockNumber({ cacheTime: 0 });
      wei = await client.getBalance({ address, blockNumber: block });
    } catch (error) {
      throw this.upstreamError(config, error);
    }
    if (block < 0n || block > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw this.report(config, new AppError('upstream_error', `The chain RPC endpoint for "${config.name}" reported an implausible block number.`, { chain: config.name }), 'InvalidBlockNumber', 'block number out of range');
    }
    return walletBalance(config, address, wei, Number(block));
  }

  private async ensureChainId(entry: ChainEntry): Promise<void> {
    if (entry.chainIdVerified) return;
    if (entry.chainIdMismatch !== undefined) throw entry.chainIdMismatch;
    entry.chainIdCheck ??= this.checkChainId(entry).finally(() => {
      entry.chainIdCheck = undefined;
    });
    await entry.chainIdCheck;
  }

  private async checkChainId(entry: ChainEntry): Promise<void> {
    const { config, client } = entry;
    let actual: number;
    try {
      const hex = await client.request({ method: 'eth_chainId' });
      actual = hexToNumber(hex);
    } catch (error) {
      // Transient failures are not remembered: the next request checks again.
      throw this.upstreamError(config, error);
    }
    if (actual !== config.chainId) {
      const mismatch = new AppError(
        'upstream_error',
        `The chain RPC endpoint for "${config.name}" serves chain id ${actual}, but chain id ${config.chainId} is configured; the operator must fix WALLET_CHAINS.`,
        { chain: config.name, expectedChainId: config.chainId, actualChainId: actual },
      );
      entry.chainIdMismatch = mismatch;
      throw this.report(config, mismatch, 'ChainIdMismatch', `eth_chainId ${actual}, configured ${config.chainId}`);
    }
    entry.chainIdVerified = true;
  }

  /** Maps a viem (or other) error to an AppError. Never includes the RPC URL, which may hold a key. */
  private upstreamError(config: WalletChainConfig, error: unknown): AppError {
    if (error instanceof AppError) return error;
    const name = config.name;
    const details = { chain: name };
    const timeout = findCause(error, (e) => e instanceof TimeoutError);
    if (timeout !== undefined) {
      return this.report(
        config,
        new AppError('upstream_timeout', `The chain RPC endpoint for "${name}" did not answer within ${this.timeoutMs} ms. Try again later.`, details),
        'TimeoutError',
        describe(error),
        error,
      );
    }
    const refused = refusedEncoding(error);
    if (refused !== undefined) {
      // It answered, in an encoding we do not read (outbound-fetch.ts): a response we cannot use, not an outage.
      return this.report(
        config,
        new AppError('upstream_error', `The chain RPC endpoint for "${name}" answered in an encoding this gateway does not read (Content-Encoding "${refused.encoding.slice(0, 40)}").`, details),
        refused.name,
        refused.message,
        error,
      );
    }
    // It answered 2xx with a body that is not JSON (a proxy's or captive portal's page), or a result
    // that is not a number: an answer we cannot read (502), not an outage. viem wraps the first's
    // parse error in an HttpRequestError, which alone would read as unavailable.
    const unreadable = findCause(error, (e) => e instanceof SyntaxError);
    if (unreadable !== undefined) {
      return this.report(
        config,
        new AppError('upstream_error', `The chain RPC endpoint for "${name}" returned an unexpected response.`, details),
        'SyntaxError',
        describe(error),
        error,
      );
    }
    const failure = findCause(error, (e) => e instanceof RpcError) ?? findCause(error, (e) => e instanceof HttpRequestError);
    if (failure !== undefined) {
      return this.report(
        config,
        new AppError('upstream_unavailable', `The chain RPC endpoint for "${name}" is unavailable. Try again later.`, details),
        failure.name,
        describe(error),
        error,
      );
    }
    return this.report(
      config,
      new AppError('upstream_error', `The chain RPC endpoint for "${name}" returned an unexpected response.`, details),
      error instanceof Error ? error.name : typeof error,
      describe(error),
      error,
    );
  }

  private report(config: WalletChainConfig, appError: AppError, errorName: string, reason: string, cause?: unknown): AppError {
    if (this.onRpcError !== undefined) {
      const event: WalletRpcErrorEvent = { chain: config.name, code: appError.code, errorName, reason };
      const httpError = findCause(cause, (e) => e instanceof HttpRequestError);
      if (httpError instanceof HttpRequestError && httpError.status !== undefined) event.httpStatus = httpError.status;
      try {
        this.onRpcError(event);
      } catch {
        // A faulty hook must not change the answer.
      }
    }
    return appError;
  }
}

/**
 * A URL-free description: viem short messages and `details`, plus system error codes found in the
 * cause chain (ECONNREFUSED, ...). Full viem messages are avoided because they contain the URL.
 */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const parts: string[] = [];
  if (error instanceof BaseError) {
    parts.push(error.shortMessage);
    if (error.details !== '' && !/https?:\/\//i.test(error.details)) parts.push(error.details);
  } else {
    parts.push(error.name);
  }
  let current: unknown = error.cause;
  for (let depth = 0; depth < 10 && current instanceof Error; depth += 1) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) parts.push(code);
    current = current.cause;
  }
  return parts.join('; ');
}
