// Public surface of the wallet connector.
export {
  DEFAULT_RPC_RETRIES,
  DEFAULT_RPC_TIMEOUT_MS,
  DEFAULT_WALLET_CHAIN,
  parseWalletChains,
  parseWalletConfig,
  parseWalletDefaultChain,
  type WalletChainConfig,
  type WalletConfig,
} from './chains.js';
export { WalletBalanceSchema, WalletParams, WalletQuery, type WalletBalanceData } from './schema.js';
export { StaticWalletService, type StaticWalletServiceOptions } from './static-wallet-service.js';
export { normalizeAddress } from './validation.js';
export {
  ViemWalletService,
  type ViemWalletServiceOptions,
  type WalletBalance,
  type WalletRpcErrorEvent,
  type WalletService,
} from './wallet-service.js';
