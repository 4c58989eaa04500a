// The wallet service as the app holds it: viem (6 MB of heap) is loaded by the first balance call,
// not at start-up. Most deployments never call the wallet connector, and every megabyte of live heap
// lengthens each full garbage collection, a pause every request in flight waits out.
import type { WalletBalance, WalletService } from './wallet-service.js';

export class LazyWalletService implements WalletService {
  private real: Promise<WalletService> | undefined;

  constructor(private readonly load: () => Promise<WalletService>) {}

  getBalance(address: string, chain?: string): Promise<WalletBalance> {
    this.real ??= this.load().catch((err: unknown) => {
      // A failed load is retried by the next call rather than remembered.
      this.real = undefined;
      throw err;
    });
    return this.real.then((service) => service.getBalance(address, chain));
  }
}
