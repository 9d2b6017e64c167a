/**
 * Verification of a wallet's signature over an EIP-191 message (Sign-In with Ethereum): an
 * externally owned account offline, a smart wallet (EIP-1271, or EIP-6492 before deployment)
 * through the chain's RPC when that chain is configured.
 */
import { createPublicClient, defineChain, http, verifyMessage, type Hex } from "viem";
import type { SessionSigner } from "../store/auth-types.js";

/**
 * Verifies `signature` of `message` by `address` as seen on `chainId`. Never throws. Resolves to
 * how it was proven: `"eoa"` when the address's own key signed (that key controls the address on
 * every chain), `"contract"` when the contract at the address accepted it on `chainId` (which
 * says nothing of the same address on another chain), null when unproven.
 */
export type SignatureVerifier = (input: { address: `0x${string}`; message: string; signature: Hex; chainId: number }) => Promise<SessionSigner | null>;

/**
 * Creates a verifier over the configured chains. An EOA signature is recovered offline; any
 * other signature is checked with viem's `publicClient.verifyMessage` (ERC-6492 / ERC-1271 via
 * `eth_call`) when `chainId` has an RPC in `chains`, else it is refused.
 */
export function createSignatureVerifier(chains: readonly { chainId: number; rpcUrl: string }[], timeoutMs = 10_000): SignatureVerifier {
  const clients = new Map<number, ReturnType<typeof createPublicClient>>();
  const clientFor = (chainId: number) => {
    const cfg = chains.find((c) => c.chainId === chainId);
    if (!cfg) return undefined;
    let client = clients.get(chainId);
    if (!client) {
      const chain = defineChain({ id: chainId, name: `chain-${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [cfg.rpcUrl] } } });
      client = createPublicClient({ chain, transport: http(cfg.rpcUrl, { timeout: timeoutMs, retryCount: 1 }) });
      clients.set(chainId, client);
    }
    return client;
  };
  return async ({ address, message, signature, chainId }) => {
    try {
      if (await verifyMessage({ address, message, signature })) return "eoa";
    } catch {
      // Not a 65-byte ECDSA signature: perhaps a smart wallet's.
    }
    const client = clientFor(chainId);
    if (!client) return null;
    try {
      return (await client.verifyMessage({ address, message, signature })) ? "contract" : null;
    } catch {
      return null;
    }
  };
}
