// TypeBox schemas for GET /wallet/v1/balance/{address}?chain=NAME (validation and OpenAPI).
// The service re-validates its input (checksum rules, configured chain names), so a route that
// skips schema validation still answers 400 invalid_request for bad input.
import { Type, type Static } from '@sinclair/typebox';

/** An EVM address (the 400's words for it: http/schemas.ts). */
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';

export const WalletParams = Type.Object(
  {
    address: Type.String({
      pattern: ADDRESS_PATTERN,
      description:
        'Account address: 0x and 40 hex digits, all lowercase, all uppercase, or mixed case with a valid EIP-55 checksum.',
      examples: ['0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1'],
    }),
  },
  { additionalProperties: false },
);
export type WalletParams = Static<typeof WalletParams>;

export const WalletQuery = Type.Object(
  {
    chain: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Configured chain name (e.g. "ethereum"); default: the operator\'s default chain.',
        examples: ['ethereum'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type WalletQuery = Static<typeof WalletQuery>;

export const WalletBalanceSchema = Type.Object(
  {
    address: Type.String({ description: 'EIP-55 checksummed address.', examples: ['0x90F8bf6A479f320ead074411a4B0e7944Ea8c9C1'] }),
    chain: Type.String({ description: 'Configured chain name.', examples: ['ethereum'] }),
    chainId: Type.Integer({ minimum: 1, description: 'EIP-155 chain id.', examples: [1] }),
    balance: Type.String({
      pattern: '^(0|[1-9][0-9]*)$',
      description: 'Native balance in the smallest unit (e.g. wei), as a decimal string.',
      examples: ['1000000000000000000000'],
    }),
    decimals: Type.Integer({ minimum: 0, maximum: 36, examples: [18] }),
    symbol: Type.String({ examples: ['ETH'] }),
    formatted: Type.String({ description: 'balance / 10^decimals, without trailing zeros.', examples: ['1000'] }),
    blockNumber: Type.Integer({ minimum: 0, description: 'Block at which the balance was read.', examples: [19000000] }),
  },
  { additionalProperties: false, title: 'WalletBalance' },
);
export type WalletBalanceData = Static<typeof WalletBalanceSchema>;
