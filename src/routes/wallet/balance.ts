import { WalletBalanceSchema, WalletParams, WalletQuery } from '../../connectors/wallet/schema.js';
import type { App } from '../../http/types.js';
import type { Deps } from '../../wiring/deps.js';
import { single } from '../../http/schemas.js';

export function registerWalletBalance(app: App, deps: Pick<Deps, 'wallet'>): void {
  app.get(
    '/wallet/v1/balance/:address',
    {
      schema: {
        operationId: 'getWalletBalance',
        tags: ['wallet'],
        summary: "An address's native-token balance on a configured EVM chain, read over JSON-RPC.",
        description: 'Reads the balance at the latest block from the chain’s RPC node. An address with a wrong EIP-55 checksum or an unknown chain is 400 invalid_request.',
        params: WalletParams,
        querystring: WalletQuery,
        response: { 200: single(WalletBalanceSchema, 'The balance.') },
      },
      config: { errors: ['upstream_error', 'upstream_unavailable', 'upstream_timeout'] },
    },
    async (request) => ({
      data: await deps.wallet.getBalance(request.params.address, request.query.chain),
      meta: { requestId: request.id, cached: false },
    }),
  );
}
