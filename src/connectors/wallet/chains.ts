// Wallet connector configuration, parsed once from the environment at start-up.
//
// Environment variables (all optional):
//
//   WALLET_CHAINS          JSON array of chains, e.g.
//                            [{"name":"ethereum","chainId":1,"rpcUrl":"https://eth.example/v3/KEY","symbol":"ETH","decimals":18},
//                             {"name":"base","chainId":8453,"rpcUrl":"https://base.example","symbol":"ETH","decimals":18}]
//                          name     lowercase slug: a letter, then letters/digits, single hyphens between
//                                   groups, at most 32 characters ("ethereum", "base-sepolia")
//                          chainId  positive safe integer (EIP-155 chain id; checked against the node's
//                                   eth_chainId on first use)
//                          rpcUrl   http:// or https:// JSON-RPC endpoint, without user:password@
//                                   (the URL may carry an API key: it never appears in responses or in
//                                   the messages thrown here)
//                          symbol   native currency symbol, 1 to 16 visible characters
//                          decimals integer 0 to 36
//                          Unknown keys are rejected (catches typos such as "rpcURL"). Names and chain
//                          ids must be unique. Unset or blank: one chain, DEFAULT_WALLET_CHAIN below.
//   WALLET_DEFAULT_CHAIN   name of the chain used when a request has no ?chain=; must be configured.
//                          Unset or blank: the first chain of WALLET_CHAINS.
//   WALLET_RPC_TIMEOUT_MS  per-RPC-request timeout in milliseconds, integer 100..120000 (default 10000).
//   WALLET_RPC_RETRIES     extra attempts after a failed RPC request, integer 0..3 (default 1).
//
// The built-in default points at a public Ethereum endpoint (https://cloudflare-eth.com) so that a
// fresh clone answers something; it is rate limited and offers no guarantees. Operators should point
// WALLET_CHAINS at their own node or at a provider they have an agreement with.
//
// Every problem throws a plain Error whose message names the variable and the offending field, so
// start-up fails fast with a message a person can act on.

export interface WalletChainConfig {
  /** Lowercase slug used in `?chain=` and returned as `chain`. */
  readonly name: string;
  readonly chainId: number;
  /** JSON-RPC endpoint. May contain a secret: never echo it to clients. */
  readonly rpcUrl: string;
  readonly symbol: string;
  readonly decimals: number;
}

export interface WalletConfig {
  readonly chains: readonly WalletChainConfig[];
  readonly defaultChain: string;
  readonly rpcTimeoutMs: number;
  readonly rpcRetries: number;
}

export const DEFAULT_WALLET_CHAIN: WalletChainConfig = Object.freeze({
  name: 'ethereum',
  chainId: 1,
  rpcUrl: 'https://cloudflare-eth.com',
  symbol: 'ETH',
  decimals: 18,
});

export const DEFAULT_RPC_TIMEOUT_MS = 10_000;
export const DEFAULT_RPC_RETRIES = 1;

const CHAIN_NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const MAX_NAME_LENGTH = 32;
const MAX_SYMBOL_LENGTH = 16;
const MAX_DECIMALS = 36;
const ALLOWED_KEYS = new Set(['name', 'chainId', 'rpcUrl', 'symbol', 'decimals']);

type Env = Record<string, string | undefined>;

function blank(value: string | undefined): value is undefined {
  return value === undefined || value.trim() === '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseChain(raw: unknown, index: number): WalletChainConfig {
  const where = `WALLET_CHAINS[${index}]`;
  if (!isRecord(raw)) throw new Error(`${where} must be an object with name, chainId, rpcUrl, symbol and decimals.`);
  for (const key of Object.keys(raw)) {
    if (!ALLOWED_KEYS.has(key)) {
      throw new Error(`${where}.${key} is not a known field (expected name, chainId, rpcUrl, symbol, decimals).`);
    }
  }

  const { name, chainId, rpcUrl, symbol, decimals } = raw;

  if (typeof name !== 'string' || name.length > MAX_NAME_LENGTH || !CHAIN_NAME.test(name)) {
    throw new Error(
      `${where}.name must be a lowercase slug (a letter, then letters, digits and single hyphens, at most ${MAX_NAME_LENGTH} characters).`,
    );
  }
  const at = `${where}.`;
  const named = `(chain "${name}")`;

  if (typeof chainId !== 'number' || !Number.isSafeInteger(chainId) || chainId <= 0) {
    throw new Error(`${at}chainId ${named} must be a positive integer.`);
  }

  // The URL itself is never echoed: it may embed an API key.
  if (typeof rpcUrl !== 'string' || rpcUrl.trim() === '') {
    throw new Error(`${at}rpcUrl ${named} must be a non-empty http(s) URL.`);
  }
  let url: URL;
  try {
    url = new URL(rpcUrl);
  } catch {
    throw new Error(`${at}rpcUrl ${named} is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${at}rpcUrl ${named} must use http:// or https://.`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new Error(`${at}rpcUrl ${named} must not contain user:password@ credentials (put the key in the path or query).`);
  }

  if (typeof symbol !== 'string' || symbol.trim() === '' || symbol !== symbol.trim() || symbol.length > MAX_SYMBOL_LENGTH || /[\s\p{Cc}]/u.test(symbol)) {
    throw new Error(`${at}symbol ${named} must be a non-empty string of at most ${MAX_SYMBOL_LENGTH} characters without spaces.`);
  }

  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > MAX_DECIMALS) {
    throw new Error(`${at}decimals ${named} must be an integer from 0 to ${MAX_DECIMALS}.`);
  }

  return Object.freeze({ name, chainId, rpcUrl, symbol, decimals });
}

/** Parses WALLET_CHAINS (see the top of this file). Throws an Error naming the bad field. */
export function parseWalletChains(env: Env): WalletChainConfig[] {
  const source = env['WALLET_CHAINS'];
  if (blank(source)) return [DEFAULT_WALLET_CHAIN];

  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch {
    throw new Error('WALLET_CHAINS is not valid JSON; expected an array of {name, chainId, rpcUrl, symbol, decimals}.');
  }
  if (!Array.isArray(parsed)) {
    throw new Error('WALLET_CHAINS must be a JSON array of {name, chainId, rpcUrl, symbol, decimals}.');
  }
  if (parsed.length === 0) throw new Error('WALLET_CHAINS must list at least one chain.');

  const chains = parsed.map((raw: unknown, index) => parseChain(raw, index));
  const names = new Map<string, number>();
  const ids = new Map<number, number>();
  chains.forEach((chain, index) => {
    const sameName = names.get(chain.name);
    if (sameName !== undefined) {
      throw new Error(`WALLET_CHAINS[${index}].name "${chain.name}" duplicates WALLET_CHAINS[${sameName}].name.`);
    }
    const sameId = ids.get(chain.chainId);
    if (sameId !== undefined) {
      throw new Error(`WALLET_CHAINS[${index}].chainId ${chain.chainId} duplicates WALLET_CHAINS[${sameId}].chainId.`);
    }
    names.set(chain.name, index);
    ids.set(chain.chainId, index);
  });
  return chains;
}

/** Resolves WALLET_DEFAULT_CHAIN against the parsed chains; default: the first one. */
export function parseWalletDefaultChain(env: Env, chains: readonly WalletChainConfig[]): string {
  const first = chains[0];
  if (first === undefined) throw new Error('WALLET_CHAINS must list at least one chain.');
  const wanted = env['WALLET_DEFAULT_CHAIN'];
  if (blank(wanted)) return first.name;
  const name = wanted.trim();
  if (!chains.some((chain) => chain.name === name)) {
    throw new Error(
      `WALLET_DEFAULT_CHAIN "${name}" is not a configured chain (configured: ${chains.map((c) => c.name).join(', ')}).`,
    );
  }
  return name;
}

function parseIntegerVar(env: Env, key: string, min: number, max: number, fallback: number): number {
  const raw = env[key];
  if (blank(raw)) return fallback;
  const text = raw.trim();
  const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`${key} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

/** Everything the wallet connector reads from the environment, validated. */
export function parseWalletConfig(env: Env): WalletConfig {
  const chains = parseWalletChains(env);
  return {
    chains,
    defaultChain: parseWalletDefaultChain(env, chains),
    rpcTimeoutMs: parseIntegerVar(env, 'WALLET_RPC_TIMEOUT_MS', 100, 120_000, DEFAULT_RPC_TIMEOUT_MS),
    rpcRetries: parseIntegerVar(env, 'WALLET_RPC_RETRIES', 0, 3, DEFAULT_RPC_RETRIES),
  };
}
