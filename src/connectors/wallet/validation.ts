// Input checks shared by every WalletService implementation, so that test doubles answer bad input
// exactly as the real service does.
import { checksumAddress, type Address } from 'viem';
import { AppError } from '../../errors/app-error.js';
import type { WalletChainConfig } from './chains.js';

const HEX_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Validates an account address and returns its EIP-55 checksummed form.
 *
 * Accepted: `0x` (lowercase x) followed by exactly 40 hex digits that are all lowercase, all
 * uppercase, or mixed case with a correct EIP-55 checksum. Rejected: anything else, including a
 * mixed-case address whose checksum is wrong: mixed case is how EIP-55 marks a checksummed
 * address, so a mismatch almost always means a typo and the caller is told rather than being shown
 * the balance of a different account. No trimming: surrounding spaces are rejected as well.
 */
export function normalizeAddress(address: string): Address {
  if (typeof address !== 'string' || !HEX_ADDRESS.test(address)) {
    throw new AppError(
      'invalid_request',
      'The address must be 0x followed by 40 hexadecimal characters.',
      { fields: [{ field: 'params.address', message: 'must be 0x followed by 40 hexadecimal characters' }] },
    );
  }
  const digits = address.slice(2);
  const lower = `0x${digits.toLowerCase()}` as Address;
  const checksummed = checksumAddress(lower);
  const singleCase = digits === digits.toLowerCase() || digits === digits.toUpperCase();
  if (!singleCase && checksummed !== address) {
    throw new AppError(
      'invalid_request',
      'The address has mixed-case letters but an invalid EIP-55 checksum; check it for typos or send it in lowercase.',
      { fields: [{ field: 'params.address', message: 'has an invalid EIP-55 checksum' }], reason: 'bad_checksum' },
    );
  }
  return checksummed;
}

/**
 * Picks the configured chain for `?chain=`; `undefined` means the default chain. Names are compared
 * case-insensitively (configured names are lowercase).
 */
export function resolveChain<T extends WalletChainConfig>(
  chains: readonly T[],
  defaultChain: string,
  requested: string | undefined,
): T {
  const name = requested === undefined ? defaultChain : requested.toLowerCase();
  const found = chains.find((chain) => chain.name === name);
  if (found === undefined) {
    const configured = chains.map((chain) => chain.name);
    throw new AppError(
      'invalid_request',
      `Unknown chain "${requested ?? defaultChain}". Configured chains: ${configured.join(', ')}.`,
      { fields: [{ field: 'querystring.chain', message: `must be one of ${configured.join(', ')}` }], allowed: configured },
    );
  }
  return found;
}

/** Validates constructor input: at least one chain, and the default chain is one of them. */
export function checkDefaultChain(chains: readonly WalletChainConfig[], defaultChain: string | undefined): string {
  const first = chains[0];
  if (first === undefined) throw new Error('A wallet service needs at least one chain.');
  const name = defaultChain ?? first.name;
  if (!chains.some((chain) => chain.name === name)) {
    throw new Error(`Default chain "${name}" is not among the configured chains (${chains.map((c) => c.name).join(', ')}).`);
  }
  return name;
}
