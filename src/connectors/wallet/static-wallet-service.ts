// In-process WalletService for tests of other parts (routes, credits, envelopes): fixed balances,
// no network, and the same input validation and errors as ViemWalletService.
import type { AppError } from '../../errors/app-error.js';
import type { WalletChainConfig } from './chains.js';
import { checkDefaultChain, normalizeAddress, resolveChain } from './validation.js';
import { walletBalance, type WalletBalance, type WalletService } from './wallet-service.js';

export interface StaticWalletServiceOptions {
  /** Default: one chain { name: 'ethereum', chainId: 1, symbol: 'ETH', decimals: 18 } (no RPC is used). */
  chains?: readonly WalletChainConfig[];
  defaultChain?: string;
  /**
   * Balances in the smallest unit, by chain name, then by address (any case). Addresses not
   * listed have balance 0.
   */
  balances?: Record<string, Record<string, bigint | string>>;
  /** Reported block number (default 1). */
  blockNumber?: number;
}

const STATIC_DEFAULT_CHAIN: WalletChainConfig = {
  name: 'ethereum',
  chainId: 1,
  rpcUrl: 'http://127.0.0.1:9/unused',
  symbol: 'ETH',
  decimals: 18,
};

export class StaticWalletService implements WalletService {
  readonly defaultChain: string;
  /** When set, every call that passes input validation throws it (simulates an RPC failure). */
  failure: AppError | undefined;
  /** Mutable so that tests can simulate new blocks. */
  blockNumber: number;
  /** Number of getBalance calls, including failed ones. */
  calls = 0;
  private readonly chainConfigs: readonly WalletChainConfig[];
  private readonly balances = new Map<string, bigint>();

  constructor(options: StaticWalletServiceOptions = {}) {
    this.chainConfigs = options.chains ?? [STATIC_DEFAULT_CHAIN];
    this.defaultChain = checkDefaultChain(this.chainConfigs, options.defaultChain);
    this.blockNumber = options.blockNumber ?? 1;
    for (const [chain, byAddress] of Object.entries(options.balances ?? {})) {
      for (const [address, amount] of Object.entries(byAddress)) this.setBalance(chain, address, amount);
    }
  }

  /** Sets a balance (smallest unit). Throws for an unknown chain or malformed address or amount. */
  setBalance(chain: string, address: string, amount: bigint | string): void {
    const config = resolveChain(this.chainConfigs, this.defaultChain, chain);
    const value = typeof amount === 'bigint' ? amount : BigInt(amount);
    if (value < 0n) throw new Error('A balance cannot be negative.');
    this.balances.set(key(config.name, normalizeAddress(address)), value);
  }

  async getBalance(address: string, chain?: string): Promise<WalletBalance> {
    this.calls += 1;
    const checksummed = normalizeAddress(address);
    const config = resolveChain(this.chainConfigs, this.defaultChain, chain);
    if (this.failure !== undefined) throw this.failure;
    const wei = this.balances.get(key(config.name, checksummed)) ?? 0n;
    return walletBalance(config, checksummed, wei, this.blockNumber);
  }
}

function key(chain: string, address: string): string {
  return `${chain}\u0000${address}`;
}
