/**
 * The browser wallet, through EIP-1193 (`window.ethereum`, as MetaMask, Rabby, Coinbase Wallet
 * and others inject it): the account and chain it connects with, and `personal_sign` of a
 * Sign-In with Ethereum message. No wallet library: three JSON-RPC methods are all it takes.
 */

/** The EIP-1193 provider interface (the part this page uses). */
export interface Eip1193Provider {
  request(args: { method: string; params?: unknown[] | Record<string, unknown> }): Promise<unknown>;
}

declare global {
  interface Window {
    ethereum?: Eip1193Provider;
  }
}

/** The injected wallet of this browser, if any. */
export function injectedWallet(): Eip1193Provider | undefined {
  return typeof window === "undefined" ? undefined : window.ethereum;
}

/** The account and chain a wallet connected with. */
export interface WalletAccount {
  /** As the wallet gives it (often lower-case). */
  address: string;
  chainId: number;
}

/** Asks the wallet for its account (`eth_requestAccounts`: the wallet may prompt) and chain (`eth_chainId`). */
export async function connectWallet(provider: Eip1193Provider): Promise<WalletAccount> {
  const accounts = await provider.request({ method: "eth_requestAccounts" });
  const address = Array.isArray(accounts) && typeof accounts[0] === "string" ? accounts[0] : undefined;
  if (!address || !/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error("The wallet returned no account.");
  const chain = await provider.request({ method: "eth_chainId" });
  const chainId = typeof chain === "string" ? Number.parseInt(chain, 16) : Number(chain);
  if (!Number.isSafeInteger(chainId) || chainId < 1) throw new Error(`The wallet returned an invalid chain id: ${String(chain)}.`);
  return { address, chainId };
}

/** UTF-8 text as 0x-hex, the form `personal_sign` takes its message in. */
export function utf8Hex(text: string): `0x${string}` {
  return `0x${Array.from(new TextEncoder().encode(text), (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** A signer of messages with `address` through the wallet's `personal_sign` (EIP-191). */
export function personalSign(provider: Eip1193Provider, address: string): (message: string) => Promise<`0x${string}`> {
  return async (message) => {
    const signature = await provider.request({ method: "personal_sign", params: [utf8Hex(message), address] });
    if (typeof signature !== "string" || !/^0x[0-9a-fA-F]+$/.test(signature)) throw new Error("The wallet returned no signature.");
    return signature as `0x${string}`;
  };
}

/** Whether `error` is the wallet's "user rejected the request" (EIP-1193 code 4001). */
export function isUserRejection(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === 4001;
}
