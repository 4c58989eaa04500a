// Domain services that routes use, grouped so tests can hand routes fakes.
import type { WalletService } from '../connectors/wallet/wallet-service.js';

export interface Services {
  startedAt: Date;
  wallet: WalletService;
}
